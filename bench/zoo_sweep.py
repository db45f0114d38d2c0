"""Breadth sweep: ~100 transformers architectures built tiny from their configs, three exporters.

    python bench/zoo_sweep.py                                  # every architecture, every exporter
    python bench/zoo_sweep.py --exporters ours                 # ours only; keeps torch's stored results
    python bench/zoo_sweep.py --models llama,t5 --exporters ours,torchscript
    python bench/zoo_sweep.py --list

Every architecture is built from its default config shrunk (hidden 32-64, 2 layers, 2-4 heads,
vocabulary 512, images 32x32), with random weights: nothing is downloaded. Every (architecture,
exporter) pair runs in its own subprocess with a timeout. In it the model is built (seeded), run
eagerly, exported at opset 18 with static shapes, loaded in onnxruntime (graph optimizations off,
so the comparison checks the exported semantics) and compared with eager torch.

Statuses: ``pass``; ``mismatch`` (exported and ran, outputs differ: silently wrong);
``export`` (the exporter raised); ``ort`` (onnxruntime refused or failed to run the file);
``timeout``; ``build`` (the model could not be built or run eagerly: a sweep problem, not counted).
Results merge into ``bench/results/zoo_sweep.json`` (so torch's exporters need running only once)
and ``bench/results/zoo_sweep.md`` is rewritten from it.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

import sweep_runner
from zoo import ready_transformers

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
EXPORTERS = ["ours", "torchscript", "dynamo"]
MARK = sweep_runner.MARK
OPSET = 18
SEQ = 8
VOCAB = 512
IMAGE = 32

# ------------------------------------------------------------------ the architectures

# Attributes a text config may have, set to tiny values when the default config has them.
TINY_TEXT = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": VOCAB,
    "d_model": 64,
    "d_ff": 128,
    "d_kv": 16,
    "num_layers": 2,
    "num_heads": 4,
    "num_decoder_layers": 2,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "encoder_ffn_dim": 128,
    "decoder_ffn_dim": 128,
    "n_embd": 64,
    "n_layer": 2,
    "n_head": 4,
    "n_inner": 128,
    "ffn_dim": 128,
    "head_dim": 16,
    "num_local_experts": 4,
    "num_experts": 4,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 64,
    "embedding_size": 64,
    "max_position_embeddings": 128,
    "layer_types": None,  # recomputed by the config from num_hidden_layers
}

# name -> (model_type, input kind, overrides). Kinds: see _inputs.
ARCHS: dict[str, tuple[str, str, dict[str, Any]]] = {
    # --- decoders (base model, ids + all-ones mask)
    "gpt2": ("gpt2", "dec", {}),
    "gpt_neo": ("gpt_neo", "dec", {"attention_types": [[["global", "local"], 1]], "window_size": 4}),
    "gptj": ("gptj", "dec", {"rotary_dim": 8}),
    "gpt_neox": ("gpt_neox", "dec", {}),
    "gpt_bigcode": ("gpt_bigcode", "dec", {}),
    "codegen": ("codegen", "dec", {"rotary_dim": 8}),
    "llama": ("llama", "dec", {}),
    "mistral": ("mistral", "dec", {"sliding_window": 4}),
    "qwen2": ("qwen2", "dec", {}),
    "qwen3": ("qwen3", "dec", {}),
    "phi": ("phi", "dec", {}),
    "phi3": ("phi3", "dec", {"pad_token_id": 0}),
    "gemma": ("gemma", "dec", {}),
    "gemma2": ("gemma2", "dec", {"sliding_window": 4}),
    "gemma3_text": ("gemma3_text", "dec", {"sliding_window": 4}),
    "falcon": ("falcon", "dec", {}),
    "bloom": ("bloom", "dec", {}),
    "opt": ("opt", "dec", {"word_embed_proj_dim": 64}),
    "stablelm": ("stablelm", "dec", {}),
    "starcoder2": ("starcoder2", "dec", {}),
    "olmo": ("olmo", "dec", {}),
    "olmo2": ("olmo2", "dec", {}),
    "cohere": ("cohere", "dec", {}),
    "mpt": ("mpt", "dec", {}),
    "persimmon": ("persimmon", "dec", {}),
    "granite": ("granite", "dec", {}),
    "nemotron": ("nemotron", "dec", {"head_dim": 16, "num_key_value_heads": 2}),
    "xglm": ("xglm", "dec", {}),
    "biogpt": ("biogpt", "dec", {}),
    "ctrl": ("ctrl", "dec", {"dff": 128}),
    "openai_gpt": ("openai-gpt", "dec", {}),
    "helium": ("helium", "dec", {}),
    "glm": ("glm", "dec", {}),
    "smollm3": ("smollm3", "dec", {}),
    "exaone4": ("exaone4", "dec", {"sliding_window": 4}),
    "mamba": ("mamba", "ids", {"state_size": 8}),
    "rwkv": ("rwkv", "ids", {"attention_hidden_size": 64, "context_length": 64}),
    # decoders with left padding, and with explicit position_ids
    "llama_leftpad": ("llama", "dec_leftpad", {}),
    "gpt2_leftpad": ("gpt2", "dec_leftpad", {}),
    "mistral_leftpad": ("mistral", "dec_leftpad", {"sliding_window": 4}),
    "qwen2_leftpad": ("qwen2", "dec_leftpad", {}),
    "gemma2_leftpad": ("gemma2", "dec_leftpad", {"sliding_window": 4}),
    "opt_leftpad": ("opt", "dec_leftpad", {"word_embed_proj_dim": 64}),
    "bloom_leftpad": ("bloom", "dec_leftpad", {}),
    "falcon_leftpad": ("falcon", "dec_leftpad", {}),
    "llama_posids": ("llama", "dec_posids", {}),
    "gpt2_posids": ("gpt2", "dec_posids", {}),
    "phi3_posids": ("phi3", "dec_posids", {"pad_token_id": 0}),
    "gpt_neox_posids": ("gpt_neox", "dec_posids", {}),
    # --- MoE decoders
    "mixtral": ("mixtral", "dec", {}),
    "qwen2_moe": ("qwen2_moe", "dec", {"decoder_sparse_step": 1}),
    "qwen3_moe": ("qwen3_moe", "dec", {}),
    "olmoe": ("olmoe", "dec", {}),
    "phimoe": ("phimoe", "dec", {}),
    "granitemoe": ("granitemoe", "dec", {}),
    "jetmoe": ("jetmoe", "dec", {"kv_channels": 16, "num_key_value_heads": 4}),
    "deepseek_v3": (
        "deepseek_v3",
        "dec",
        {
            "kv_lora_rank": 16,
            "q_lora_rank": 32,
            "qk_rope_head_dim": 8,
            "qk_nope_head_dim": 8,
            "v_head_dim": 16,
            "first_k_dense_replace": 1,
            "n_group": 1,
            "topk_group": 1,
            "head_dim": 8,
        },
    ),
    "mixtral_leftpad": ("mixtral", "dec_leftpad", {}),
    # --- encoders (ids + mask)
    "bert": ("bert", "enc", {}),
    "roberta": ("roberta", "enc", {}),
    "distilbert": ("distilbert", "enc", {"dim": 64, "n_layers": 2, "n_heads": 4, "hidden_dim": 128}),
    "albert": ("albert", "enc", {"embedding_size": 32}),
    "electra": ("electra", "enc", {}),
    "deberta": ("deberta", "enc", {"relative_attention": True, "pos_att_type": ["c2p", "p2c"]}),
    "deberta_v2": ("deberta-v2", "enc", {}),
    "xlm_roberta": ("xlm-roberta", "enc", {}),
    "camembert": ("camembert", "enc", {}),
    "mpnet": ("mpnet", "enc", {}),
    "funnel": ("funnel", "enc", {"block_sizes": [1, 1], "d_head": 16, "d_inner": 128, "_class": "FunnelModel"}),
    "squeezebert": ("squeezebert", "enc", {}),
    "convbert": ("convbert", "enc", {}),
    "ernie": ("ernie", "enc", {}),
    "megatron_bert": ("megatron-bert", "enc", {}),
    "mobilebert": ("mobilebert", "enc", {"embedding_size": 32, "intra_bottleneck_size": 32, "true_hidden_size": 32}),
    "canine": ("canine", "canine", {}),
    "fnet": ("fnet", "ids", {}),
    "big_bird": ("big_bird", "enc", {"attention_type": "original_full"}),
    "big_bird_sparse": ("big_bird", "enc_long", {"block_size": 2, "num_random_blocks": 2}),
    "roformer": ("roformer", "enc", {}),
    "longformer": ("longformer", "enc", {"attention_window": 4}),
    "rembert": ("rembert", "enc", {"input_embedding_size": 32, "output_embedding_size": 32}),
    "xlm": ("xlm", "enc", {"emb_dim": 64, "n_layers": 2, "n_heads": 4}),
    "ibert": ("ibert", "enc", {}),
    "data2vec_text": ("data2vec-text", "enc", {}),
    "esm": ("esm", "enc", {"pad_token_id": 1, "mask_token_id": 2, "vocab_size": 128}),
    "modernbert": ("modernbert", "enc", {"global_attn_every_n_layers": 2, "local_attention": 4}),
    "nystromformer": ("nystromformer", "enc", {"num_landmarks": 4, "segment_means_seq_len": SEQ}),
    "splinter": ("splinter", "enc", {}),
    "layoutlm": ("layoutlm", "enc", {}),
    "xlnet": ("xlnet", "enc", {"d_inner": 128, "n_layer": 2}),
    "mra": ("mra", "enc", {}),
    "yoso": ("yoso", "enc", {}),
    "roberta_prelayernorm": ("roberta-prelayernorm", "enc", {}),
    "bert_leftpad": ("bert", "enc_pad", {}),
    # --- encoder-decoders (ids + mask + decoder ids)
    "t5": ("t5", "encdec", {}),
    "mt5": ("mt5", "encdec", {}),
    "umt5": ("umt5", "encdec", {}),
    "longt5": ("longt5", "encdec", {}),
    "switch_transformers": (
        "switch_transformers",
        "encdec",
        {"num_sparse_encoder_layers": 1, "num_sparse_decoder_layers": 1},
    ),
    "bart": ("bart", "encdec", {}),
    "mbart": ("mbart", "encdec", {}),
    "marian": ("marian", "encdec", {"decoder_start_token_id": 0, "pad_token_id": 0}),
    "pegasus": ("pegasus", "encdec", {}),
    "blenderbot": ("blenderbot", "encdec", {}),
    "blenderbot_small": ("blenderbot-small", "encdec", {}),
    "m2m_100": ("m2m_100", "encdec", {}),
    "led": (
        "led",
        "encdec",
        {"attention_window": 4, "max_encoder_position_embeddings": 64, "max_decoder_position_embeddings": 64},
    ),
    "prophetnet": (
        "prophetnet",
        "encdec",
        {
            "ngram": 2,
            "num_encoder_layers": 2,
            "num_decoder_layers": 2,
            "num_encoder_attention_heads": 4,
            "num_decoder_attention_heads": 4,
        },
    ),
    "fsmt": ("fsmt", "encdec", {"src_vocab_size": VOCAB, "tgt_vocab_size": VOCAB, "langs": ["en", "de"]}),
    "plbart": ("plbart", "encdec", {}),
    "bigbird_pegasus": ("bigbird_pegasus", "encdec", {"attention_type": "original_full"}),
    "pegasus_x": ("pegasus_x", "encdec", {"block_size": 4, "num_global_tokens": 2}),
    "nllb_moe": ("nllb-moe", "encdec", {"num_experts": 4, "expert_capacity": 8}),
    "mvp": ("mvp", "encdec", {}),
    # --- vision (pixel_values 1x3x32x32)
    "vit": ("vit", "image", {"image_size": IMAGE, "patch_size": 8}),
    "deit": ("deit", "image", {"image_size": IMAGE, "patch_size": 8}),
    "beit": ("beit", "image", {"image_size": IMAGE, "patch_size": 8, "use_relative_position_bias": True}),
    "data2vec_vision": (
        "data2vec-vision",
        "image",
        {"image_size": IMAGE, "patch_size": 8, "use_relative_position_bias": True},
    ),
    "dinov2": ("dinov2", "image", {"image_size": IMAGE, "patch_size": 8}),
    "swin": (
        "swin",
        "image",
        {
            "image_size": IMAGE,
            "patch_size": 4,
            "embed_dim": 16,
            "depths": [1, 1],
            "num_heads": [2, 2],
            "window_size": 4,
        },
    ),
    "swinv2": (
        "swinv2",
        "image",
        {
            "image_size": IMAGE,
            "patch_size": 4,
            "embed_dim": 16,
            "depths": [1, 1],
            "num_heads": [2, 2],
            "window_size": 4,
        },
    ),
    "convnext": ("convnext", "image", {"hidden_sizes": [16, 32], "depths": [1, 1], "num_stages": 2}),
    "convnextv2": ("convnextv2", "image", {"hidden_sizes": [16, 32], "depths": [1, 1], "num_stages": 2}),
    "resnet": ("resnet", "image", {"embedding_size": 16, "hidden_sizes": [16, 32], "depths": [1, 1]}),
    "regnet": (
        "regnet",
        "image",
        {"embedding_size": 16, "hidden_sizes": [16, 32], "depths": [1, 1], "groups_width": 8},
    ),
    "mobilenet_v2": ("mobilenet_v2", "image", {"image_size": IMAGE, "depth_multiplier": 0.35}),
    "mobilevit": (
        "mobilevit",
        "image",
        {"image_size": IMAGE, "hidden_sizes": [16, 24, 32], "neck_hidden_sizes": [8, 8, 16, 16, 24, 32, 64]},
    ),
    "efficientnet": (
        "efficientnet",
        "image",
        {"image_size": IMAGE, "width_coefficient": 0.25, "depth_coefficient": 0.25, "hidden_dim": 320},
    ),
    "levit": (
        "levit",
        "image",
        {
            "image_size": 64,
            "hidden_sizes": [32, 48, 64],
            "num_attention_heads": [2, 2, 2],
            "depths": [1, 1, 1],
            "key_dim": [8, 8, 8],
        },
    ),
    "poolformer": ("poolformer", "image", {"hidden_sizes": [16, 16, 32, 32], "depths": [1, 1, 1, 1]}),
    "segformer": (
        "segformer",
        "image",
        {"hidden_sizes": [16, 16, 32, 32], "depths": [1, 1, 1, 1], "decoder_hidden_size": 32},
    ),
    "cvt": ("cvt", "image", {"embed_dim": [16, 32, 64], "num_heads": [1, 2, 4], "depth": [1, 2, 3]}),
    "pvt": (
        "pvt",
        "image",
        {
            "image_size": IMAGE,
            "hidden_sizes": [16, 16, 32, 32],
            "depths": [1, 1, 1, 1],
            "num_attention_heads": [1, 1, 2, 2],
        },
    ),
    "bit": ("bit", "image", {"embedding_size": 32, "hidden_sizes": [32, 64], "depths": [1, 1], "num_groups": 8}),
    "yolos": ("yolos", "image", {"image_size": [IMAGE, IMAGE], "patch_size": 8, "num_detection_tokens": 4}),
    "focalnet": (
        "focalnet",
        "image",
        {"image_size": IMAGE, "embed_dim": 16, "depths": [1, 1], "focal_levels": [2, 2], "focal_windows": [3, 3]},
    ),
    "clip_vision": ("clip_vision_model", "image", {"image_size": IMAGE, "patch_size": 8}),
    "siglip_vision": ("siglip_vision_model", "image", {"image_size": IMAGE, "patch_size": 8}),
    "vit_msn": ("vit_msn", "image", {"image_size": IMAGE, "patch_size": 8}),
    "clip": ("clip", "clip", {}),
    # --- audio
    "whisper": ("whisper", "whisper", {"max_source_positions": 16, "num_mel_bins": 16, "max_target_positions": 32}),
    "speech_to_text": (
        "speech_to_text",
        "s2t",
        {"input_feat_per_channel": 16, "conv_channels": 32, "max_source_positions": 64, "max_target_positions": 32},
    ),
    "wav2vec2": ("wav2vec2", "wave", {}),
    "hubert": ("hubert", "wave", {}),
    "wavlm": ("wavlm", "wave", {"num_buckets": 32, "max_bucket_distance": 64}),
    "sew": ("sew", "wave", {"squeeze_factor": 2}),
    "sew_d": ("sew-d", "wave", {"squeeze_factor": 2, "max_position_embeddings": 64, "position_buckets": 16}),
    "unispeech": ("unispeech", "wave", {}),
    "data2vec_audio": ("data2vec-audio", "wave", {}),
    "wav2vec2_conformer": ("wav2vec2-conformer", "wave", {"position_embeddings_type": "relative"}),
    "ast": (
        "audio-spectrogram-transformer",
        "ast",
        {"num_mel_bins": 16, "max_length": 32, "patch_size": 8, "frequency_stride": 8, "time_stride": 8},
    ),
}

WAVE_TINY = {
    "conv_dim": [16, 16],
    "conv_stride": [5, 2],
    "conv_kernel": [10, 3],
    "num_conv_pos_embeddings": 16,
    "num_conv_pos_embedding_groups": 4,
}


def _tiny_config(model_type: str, overrides: dict[str, Any]):
    from transformers import AutoConfig

    default = AutoConfig.for_model(model_type)
    kw: dict[str, Any] = {}
    text_cfg = default.to_dict()
    for key, value in TINY_TEXT.items():
        if key in text_cfg and text_cfg[key] is not None and not isinstance(text_cfg[key], (list, dict)):
            kw[key] = value
        elif key == "layer_types" and key in text_cfg:
            kw[key] = value
    if "conv_dim" in text_cfg:
        kw.update(WAVE_TINY)
    for key in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "sep_token_id"):
        v = text_cfg.get(key)
        if isinstance(v, int) and v >= VOCAB:
            kw[key] = 1
    kw.update({k: v for k, v in overrides.items() if not k.startswith("_")})
    kw["use_cache"] = False
    return AutoConfig.for_model(model_type, **kw)


def _ids(n: int = SEQ, seed: int = 1):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, 100, (2, n), generator=g, dtype=torch.long)


def _inputs(kind: str, cfg) -> dict[str, Any]:
    """The keyword inputs for ``kind`` (batch 2 so padding can differ between rows)."""
    import torch

    g = torch.Generator().manual_seed(2)
    ids = _ids()
    ones = torch.ones_like(ids)
    if kind == "ids":
        return {"input_ids": ids}
    if kind in ("dec", "enc"):
        return {"input_ids": ids, "attention_mask": ones}
    if kind == "enc_long":
        long_ids = _ids(64)
        return {"input_ids": long_ids, "attention_mask": torch.ones_like(long_ids)}
    if kind in ("dec_leftpad", "enc_pad"):
        mask = ones.clone()
        if kind == "dec_leftpad":
            mask[1, :3] = 0  # row 1 is left-padded by 3 tokens
        else:
            mask[1, -3:] = 0
        return {"input_ids": ids, "attention_mask": mask}
    if kind == "dec_posids":
        mask = ones.clone()
        mask[1, :3] = 0
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        return {"input_ids": ids, "attention_mask": mask, "position_ids": pos}
    if kind == "canine":
        return {"input_ids": torch.randint(32, 1000, (2, 16), generator=g), "attention_mask": torch.ones(2, 16)}
    if kind == "encdec":
        return {"input_ids": ids, "attention_mask": ones, "decoder_input_ids": _ids(5, seed=3)}
    if kind == "image":
        size = getattr(cfg, "image_size", IMAGE)
        size = size[0] if isinstance(size, (list, tuple)) else size
        return {"pixel_values": torch.randn(2, getattr(cfg, "num_channels", 3), size, size, generator=g)}
    if kind == "clip":
        return {
            "input_ids": ids,
            "attention_mask": ones,
            "pixel_values": torch.randn(2, 3, cfg.vision_config.image_size, cfg.vision_config.image_size, generator=g),
        }
    if kind == "whisper":
        feats = torch.randn(2, cfg.num_mel_bins, 2 * cfg.max_source_positions, generator=g)
        return {"input_features": feats, "decoder_input_ids": _ids(5, seed=3)}
    if kind == "s2t":
        feats = torch.randn(2, 24, cfg.input_feat_per_channel, generator=g)
        return {
            "input_features": feats,
            "attention_mask": torch.ones(2, 24, dtype=torch.long),
            "decoder_input_ids": _ids(5, seed=3),
        }
    if kind == "wave":
        return {"input_values": torch.randn(2, 800, generator=g)}
    if kind == "ast":
        return {"input_values": torch.randn(2, cfg.max_length, cfg.num_mel_bins, generator=g)}
    raise ValueError(kind)


def _tiny_sub_configs(model_type: str, cfg_overrides: dict[str, Any]):
    """CLIP-like models hold a text and a vision config: shrink both."""
    from transformers import AutoConfig

    text = {
        k: v
        for k, v in TINY_TEXT.items()
        if k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size")
    }
    text["max_position_embeddings"] = 32
    vision = dict(text, image_size=IMAGE, patch_size=8)
    vision.pop("vocab_size")
    return AutoConfig.for_model(model_type, text_config=text, vision_config=vision, projection_dim=32, **cfg_overrides)


def build(name: str):
    """``(wrapper module, positional args, input names)`` for architecture ``name``."""
    import torch
    from transformers import AutoModel

    model_type, kind, overrides = ARCHS[name]
    torch.manual_seed(0)
    cfg = _tiny_sub_configs(model_type, {}) if kind == "clip" else _tiny_config(model_type, overrides)
    if hasattr(cfg, "_attn_implementation"):
        cfg._attn_implementation = "eager" if model_type in ("wav2vec2-conformer",) else cfg._attn_implementation
    cls_name = overrides.get("_class")
    if cls_name:
        import transformers

        model = getattr(transformers, cls_name)(cfg).eval()
    else:
        model = AutoModel.from_config(cfg).eval()
    inputs = _inputs(kind, cfg)
    names = list(inputs)

    class Wrapper(torch.nn.Module):
        """Positional tensors in, the model's first (up to) two tensor outputs out."""

        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            kwargs = dict(zip(names, args))
            if "decoder_input_ids" in kwargs or kind in ("dec", "dec_leftpad", "dec_posids", "ids"):
                kwargs["use_cache"] = False
            out = self.model(**kwargs, return_dict=False)
            if isinstance(out, torch.Tensor):
                return out
            flat = [o for o in out if isinstance(o, torch.Tensor)]
            return tuple(flat[:2]) if len(flat) > 1 else flat[0]

    return Wrapper().eval(), tuple(inputs.values()), names


# ------------------------------------------------------------------ the worker


def worker(name: str, exporter: str) -> dict[str, Any]:
    import numpy as np
    import torch

    warnings.filterwarnings("ignore")
    ready_transformers()
    result: dict[str, Any] = {"status": "build"}
    t0 = time.perf_counter()
    try:
        model, args, names = build(name)
        with torch.no_grad():
            ref = model(*args)
        ref = [ref] if isinstance(ref, torch.Tensor) else list(ref)
    except Exception as exc:  # noqa: BLE001 - reported
        result["error"] = sweep_runner.first_line(exc)
        result["traceback"] = traceback.format_exc()[-3000:]
        return result
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        try:
            sweep_runner.export_with(exporter, model, args, path, opset_version=OPSET, input_names=names)
        except Exception as exc:  # noqa: BLE001 - reported
            result.update(
                status="export",
                error=sweep_runner.first_line(exc, cause=exporter != "ours"),
                traceback=traceback.format_exc()[-3000:],
            )
            result["export_seconds"] = round(time.perf_counter() - t0, 2)
            return result
        result["export_seconds"] = round(time.perf_counter() - t0, 2)
        try:
            sess = sweep_runner.unoptimized_session(path)
            feeds = {}
            for info, a in zip(sess.get_inputs(), [a for a in args]):
                feeds[info.name] = a.numpy()
            if len(sess.get_inputs()) != len(args):  # an unused input was dropped: feed by name
                by_name = dict(zip(names, args))
                feeds = {i.name: by_name[i.name].numpy() for i in sess.get_inputs()}
            outs = sess.run(None, feeds)
        except Exception as exc:  # noqa: BLE001 - reported
            result.update(status="ort", error=sweep_runner.first_line(exc), traceback=traceback.format_exc()[-3000:])
            return result
    worst = 0.0
    for r, o in zip(ref, outs):
        r = r.detach().numpy()
        if r.shape != o.shape:
            result.update(status="mismatch", error=f"output shape {o.shape} != eager {r.shape}")
            return result
        if r.dtype == np.bool_ or np.issubdtype(r.dtype, np.integer):
            diff = float((r != o).sum())
        else:
            diff = float(np.max(np.abs(r.astype(np.float64) - o.astype(np.float64)) - 1e-3 * np.abs(r)))
            if np.isnan(r).any() != np.isnan(o).any():
                diff = float("inf")
        worst = max(worst, diff)
    result["max_diff"] = worst
    if len(outs) != len(ref):
        result.update(status="mismatch", error=f"{len(outs)} outputs, eager has {len(ref)}")
    elif worst > 1e-3:
        result.update(status="mismatch", error=f"max |diff| - 1e-3|ref| = {worst:.3g}")
    else:
        result["status"] = "pass"
    return result


# ------------------------------------------------------------------ the driver

TIMEOUTS = {"ours": 240, "torchscript": 240, "dynamo": 420}


def run_pair(name: str, exporter: str) -> dict[str, Any]:
    return sweep_runner.run_worker(__file__, [name, exporter], TIMEOUTS[exporter])


def render(data: dict[str, Any]) -> str:
    res = data["results"]
    names = [n for n in ARCHS if n in res] + sorted(n for n in res if n not in ARCHS)
    lines = [
        "# transformers zoo sweep",
        "",
        f"Generated by `python bench/zoo_sweep.py` ({data.get('meta', {}).get('date', '?')}; "
        f"{data.get('meta', {}).get('versions', '')}). Tiny configs, random weights, opset {OPSET}, static "
        "shapes, onnxruntime with graph optimizations off, compared with eager torch "
        "(|diff| <= 1e-3 + 1e-3 |ref|).",
        "",
    ]
    lines += [f"{note}" for note in data.get("notes", [])] + ([""] if data.get("notes") else [])
    commits = sorted({r["ours"]["commit"] for r in res.values() if "commit" in r.get("ours", {})})
    if commits:
        lines += [f"Ours measured at commit(s): {', '.join(commits)} (per row in the JSON).", ""]
    counted = [n for n in names if not any(res[n].get(e, {}).get("status") == "build" for e in EXPORTERS)]
    lines.append(f"Architectures: {len(counted)} (built and run eagerly)")
    lines.append("")
    lines.append("| exporter | pass | mismatch | export error | ort error | timeout/crash | not run |")
    lines.append("|---|---|---|---|---|---|---|")
    for e in EXPORTERS:
        st = [res[n].get(e, {}).get("status") for n in counted]
        lines.append(
            f"| {e} | {st.count('pass')} | {st.count('mismatch')} | {st.count('export')} | {st.count('ort')} | "
            f"{st.count('timeout') + st.count('crash')} | {st.count(None)} |"
        )
    lines += [
        "",
        "| architecture | ours | torchscript | dynamo | first error (ours, else torch's) |",
        "|---|---|---|---|---|",
    ]
    for n in names:
        row = res[n]
        cells = [row.get(e, {}).get("status", "-") for e in EXPORTERS]
        err = ""
        for e in EXPORTERS:
            if row.get(e, {}).get("status") not in (None, "pass"):
                err = f"{e}: {row[e].get('error', '')}"
                break
        err = sweep_runner.ANSI.sub("", err).replace("|", "\\|").replace("\n", " ")[:220]
        lines.append(f"| {n} | {' | '.join(cells)} | {err} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ns = sweep_runner.arguments(
        __doc__,
        RESULTS / "zoo_sweep.json",
        EXPORTERS,
        extra=lambda ap: ap.add_argument(
            "--merge-from", type=Path, help="copy the results of another run's JSON into --results"
        ),
    )
    if ns.worker:
        res = worker(*ns.worker)
        print(MARK + json.dumps(res), flush=True)
        return
    if ns.list:
        for n, (mt, kind, _) in ARCHS.items():
            print(f"{n:24s} {mt:28s} {kind}")
        return
    data = sweep_runner.load(ns.results)
    if ns.render:
        sweep_runner.save(data, ns.results, render)
        return
    if ns.merge_from:
        for name, row in sweep_runner.load(ns.merge_from)["results"].items():
            data["results"].setdefault(name, {}).update(row)
        sweep_runner.save(data, ns.results, render)
        return
    names = sweep_runner.selected(ns.models, ARCHS)
    exporters = ns.exporters.split(",")
    import torch

    ready_transformers()
    import transformers

    data["meta"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": f"torch {torch.__version__}, transformers {transformers.__version__}, "
        f"python {platform.python_version()}",
    }
    pairs = [(n, e) for n in names for e in exporters]
    sweep_runner.record_all(data, run_pair, pairs, ns.jobs, lambda d: sweep_runner.save(d, ns.results, render))


if __name__ == "__main__":
    main()
