"""The benchmark zoo: every model is built from a config with random weights (no downloads).

Each entry builds ``(model, args, input_names, dynamic_axes)`` where ``model`` returns a tensor or a
tuple of tensors. HF models are wrapped so that they take positional tensors and return tensors
(``return_dict=False``; transformers 5 dropped the ``torchscript=True`` config flag).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

SEQ = 16
IMAGE = 224


def ready_transformers() -> None:
    """transformers imports torchvision where Pillow is installed; a torchvision whose compiled
    ops cannot load then fails every model's import (tests/torchvision_shim.py readies it)."""
    tests = str(Path(__file__).resolve().parent.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import torchvision_shim

    torchvision_shim.prepare_for_transformers()


@dataclasses.dataclass
class Entry:
    name: str
    build: Callable[[], tuple[Any, tuple, list[str], dict]]
    description: str
    large: bool = False
    tags: tuple[str, ...] = ()


class _HFWrapper(nn.Module):
    """Positional tensors in, a tuple of tensors out."""

    def __init__(self, model: nn.Module, arg_names: list[str], n_outputs: int = 1):
        super().__init__()
        self.model = model
        self.arg_names = arg_names
        self.n_outputs = n_outputs

    def forward(self, *args):
        out = self.model(**dict(zip(self.arg_names, args)), return_dict=False)
        if isinstance(out, torch.Tensor):
            return out
        out = tuple(o for o in out if isinstance(o, torch.Tensor))[: self.n_outputs]
        return out[0] if len(out) == 1 else out


def _seed() -> None:
    torch.manual_seed(0)


def _text_inputs(vocab: int, batch: int = 1, seq: int = SEQ) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (batch, seq), generator=g, dtype=torch.long)
    mask = torch.ones(batch, seq, dtype=torch.long)
    return ids, mask


def _hf(model: nn.Module, arg_names: list[str], args: tuple, n_outputs: int = 1, config_flag: bool = True):
    if config_flag:  # ConvNext's forward reads .last_hidden_state of its encoder: keep the flag there
        model.config.return_dict = False
    model.eval()
    wrapped = _HFWrapper(model, arg_names, n_outputs).eval()
    axes = {name: {0: "batch"} for name in arg_names}
    return wrapped, args, list(arg_names), axes


def bert(batch: int = 1, seq: int = SEQ):
    ready_transformers()
    from transformers import BertConfig, BertModel

    _seed()
    cfg = BertConfig()  # bert-base-uncased sizes
    ids, mask = _text_inputs(cfg.vocab_size, batch, seq)
    return _hf(BertModel(cfg), ["input_ids", "attention_mask"], (ids, mask), n_outputs=2)


def gpt2(batch: int = 1, seq: int = SEQ):
    ready_transformers()
    from transformers import GPT2Config, GPT2Model

    _seed()
    cfg = GPT2Config(use_cache=False)  # gpt2 (small) sizes
    ids, mask = _text_inputs(cfg.vocab_size, batch, seq)
    return _hf(GPT2Model(cfg), ["input_ids", "attention_mask"], (ids, mask))


def distilbert():
    ready_transformers()
    from transformers import DistilBertConfig, DistilBertModel

    _seed()
    cfg = DistilBertConfig()
    ids, mask = _text_inputs(cfg.vocab_size)
    return _hf(DistilBertModel(cfg), ["input_ids", "attention_mask"], (ids, mask))


def t5_encoder():
    ready_transformers()
    from transformers import T5Config, T5EncoderModel

    _seed()
    cfg = T5Config(
        d_model=512, d_ff=2048, d_kv=64, num_layers=6, num_heads=8, vocab_size=32128, use_cache=False
    )  # t5-small
    ids, mask = _text_inputs(cfg.vocab_size)
    return _hf(T5EncoderModel(cfg), ["input_ids", "attention_mask"], (ids, mask))


def vit(batch: int = 1):
    ready_transformers()
    from transformers import ViTConfig, ViTModel

    _seed()
    cfg = ViTConfig()  # vit-base-patch16-224 sizes
    x = torch.randn(batch, 3, IMAGE, IMAGE, generator=torch.Generator().manual_seed(1))
    return _hf(ViTModel(cfg, add_pooling_layer=False), ["pixel_values"], (x,))


def resnet50():
    ready_transformers()
    from transformers import ResNetConfig, ResNetModel

    _seed()
    cfg = ResNetConfig(
        embedding_size=64, hidden_sizes=[256, 512, 1024, 2048], depths=[3, 4, 6, 3], layer_type="bottleneck"
    )  # microsoft/resnet-50 sizes
    x = torch.randn(1, 3, IMAGE, IMAGE, generator=torch.Generator().manual_seed(1))
    return _hf(ResNetModel(cfg), ["pixel_values"], (x,), n_outputs=2)


def convnext_tiny():
    ready_transformers()
    from transformers import ConvNextConfig, ConvNextModel

    _seed()
    cfg = ConvNextConfig(depths=[3, 3, 9, 3], hidden_sizes=[96, 192, 384, 768])
    x = torch.randn(1, 3, IMAGE, IMAGE, generator=torch.Generator().manual_seed(1))
    return _hf(ConvNextModel(cfg), ["pixel_values"], (x,), n_outputs=2, config_flag=False)


def whisper_tiny_encoder():
    ready_transformers()
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    _seed()
    cfg = WhisperConfig(
        d_model=384,
        encoder_layers=4,
        encoder_attention_heads=6,
        decoder_layers=4,
        decoder_attention_heads=6,
        encoder_ffn_dim=1536,
        decoder_ffn_dim=1536,
        num_mel_bins=80,
        max_source_positions=1500,
    )  # openai/whisper-tiny
    x = torch.randn(1, 80, 3000, generator=torch.Generator().manual_seed(1))
    return _hf(WhisperEncoder(cfg), ["input_features"], (x,))


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(64, 256, num_layers=2, batch_first=True)
        self.head = nn.Linear(256, 10)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out), h, c


def lstm():
    _seed()
    x = torch.randn(1, SEQ, 64, generator=torch.Generator().manual_seed(1))
    return LSTMModel().eval(), (x,), ["x"], {"x": {0: "batch"}}


class LoopModel(nn.Module):
    """A data-dependent loop (trip count from an input tensor) and a loop over a dimension."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(128, 128)
        self.out = nn.Linear(128, 8)

    def forward(self, x: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
        h = torch.zeros_like(x[:, 0])
        for t in range(x.size(1)):
            h = torch.tanh(self.cell(h) + x[:, t])
        for _ in range(int(steps)):
            h = torch.relu(self.cell(h)) + h
        return self.out(h)


def scripted_loop():
    _seed()
    x = torch.randn(1, SEQ, 128, generator=torch.Generator().manual_seed(1))
    steps = torch.tensor(3)
    return torch.jit.script(LoopModel().eval()), (x, steps), ["x", "steps"], {"x": {0: "batch"}}


def encoder12():
    """The model of issue #18: 12 nn.TransformerEncoderLayers, d=768, 12 heads, ff 3072 (340 MB)."""
    _seed()
    layer = nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True)
    model = nn.TransformerEncoder(layer, 12, enable_nested_tensor=False).eval()
    x = torch.randn(2, 128, 768, generator=torch.Generator().manual_seed(1))
    return model, (x,), ["x"], {"x": {0: "batch"}}


class LargeModel(nn.Module):
    """~2.06 GiB of float32 weights: two 16384x16384 Linear layers plus a smaller head."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16384, 16384)
        self.fc2 = nn.Linear(16384, 16384)
        self.fc3 = nn.Linear(16384, 1024)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def large():
    _seed()
    with torch.no_grad():
        m = LargeModel().eval()
    x = torch.randn(1, 16384, generator=torch.Generator().manual_seed(1))
    return m, (x,), ["x"], {"x": {0: "batch"}}


ZOO: dict[str, Entry] = {
    e.name: e
    for e in [
        Entry("lstm", lstm, "nn.LSTM 2 layers (64->256) + Linear, seq 16"),
        Entry("scripted_loop", scripted_loop, "torch.jit.script module with loops (range(seq), range(int(steps)))"),
        Entry("resnet50", resnet50, "transformers ResNetModel, resnet-50 config, 1x3x224x224"),
        Entry("distilbert", distilbert, "transformers DistilBertModel, default config, 1x16"),
        Entry("bert", bert, "transformers BertModel, bert-base config, 1x16"),
        Entry("gpt2", gpt2, "transformers GPT2Model, gpt2 (small) config, 1x16"),
        Entry("t5_encoder", t5_encoder, "transformers T5EncoderModel, t5-small config, 1x16"),
        Entry("vit", vit, "transformers ViTModel, vit-base config, 1x3x224x224"),
        Entry("convnext_tiny", convnext_tiny, "transformers ConvNextModel, convnext-tiny config, 1x3x224x224"),
        Entry(
            "whisper_tiny_encoder", whisper_tiny_encoder, "transformers WhisperEncoder, whisper-tiny config, 1x80x3000"
        ),
        # realistic inputs: the forward pass a real trace computes is no longer negligible
        Entry("encoder12", encoder12, "nn.TransformerEncoder, 12 layers d=768, 2x128", tags=("realistic",)),
        Entry("bert_b4s128", lambda: bert(4, 128), "bert (as above), 4x128", tags=("realistic",)),
        Entry("gpt2_b4s128", lambda: gpt2(4, 128), "gpt2 (as above), 4x128", tags=("realistic",)),
        Entry("vit_b4", lambda: vit(4), "vit (as above), 4x3x224x224", tags=("realistic",)),
        Entry("large", large, "synthetic 3x nn.Linear, ~2.06 GiB of float32 weights", large=True),
    ]
}
