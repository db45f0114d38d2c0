"""Shared test helpers: export to memory, run in onnxruntime, compare with eager torch."""

from __future__ import annotations

import importlib
import io
import json
import os
import pathlib
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import onnx_checks
import onnx_ir as ir
import pytest
import reference_runs
import torch

import exporter
from exporter import assemble, runtime_list, serialization
from exporter.capture.inputs import flatten_inputs, named_tensors, split_args, wrap_numbers
from exporter.graph_context import OPTIONAL_OPSET
from exporter.tensors import quantized_output_parts
from exporter.verify import kept_inputs, run_onnxruntime

# -- opsets -----------------------------------------------------------------------------------------
# A test of an op's lowering takes its opsets from the registry (tests/cases.py: where the op's
# symbolic is registered, 9 and the newest). A test of a behaviour takes one of the lists below,
# built from the exporter's own constants: the first opset the behaviour needs, the opsets where
# what it may need appears, the default and the newest. No test module writes its own list
# (tests/test_layout.py checks it).

MIN_OPSET = exporter.MIN_OPSET
NEWEST = exporter.max_opset()
DEFAULT_OPSET = exporter.DEFAULT_OPSET
# ONNX sequences (lists whose length is known only at run time) from 11; If and Loop carry them from 13
SEQUENCE_OPSET = runtime_list.SEQUENCE_OPSET
CONTROL_FLOW_SEQUENCE_OPSET = runtime_list.CONTROL_FLOW_SEQUENCE_OPSET

# a scripted model's None results are empty optional outputs, and its Optional[Tensor]
# parameters optional inputs, from 15 (as torch's exporter writes them)
NONE_OUTPUT_OPSET = assemble.NONE_OUTPUT_OPSET
OPTIONAL_INPUT_OPSET = assemble.OPTIONAL_INPUT_OPSET
# the newest opset at which onnxruntime has every kernel the tests run (from 22 it lacks
# Random* and MaxRoiPool, at 28 If and Loop on optionals; run_model checks such models in onnx's
# reference evaluator, which has no optionals)
ORT_COMPLETE_OPSET = 21
# the newest opset torch's TorchScript exporter writes: tests that compare with it stop there
TORCH_EXPORTER_NEWEST = importlib.import_module("torch.onnx._constants").ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET

# a behaviour no opset enables: the base, the default, the newest
BASE_OPSETS = (MIN_OPSET, DEFAULT_OPSET, NEWEST)
# the base and every opset where what a scripted program may need appears (sequences at 11,
# sequences through If and Loop at 13), the default and the newest: below what a program
# needs, its export must name the opset
FEATURE_OPSETS = (MIN_OPSET, SEQUENCE_OPSET, CONTROL_FLOW_SEQUENCE_OPSET, DEFAULT_OPSET, NEWEST)
SEQUENCE_OPSETS = (SEQUENCE_OPSET, CONTROL_FLOW_SEQUENCE_OPSET, DEFAULT_OPSET, NEWEST)
CONTROL_FLOW_SEQUENCE_OPSETS = (CONTROL_FLOW_SEQUENCE_OPSET, DEFAULT_OPSET, NEWEST)
# ONNX optionals (None on one run-time path of an If or Loop) from 16; onnxruntime runs them
# to ORT_COMPLETE_OPSET
OPTIONAL_OPSETS = (OPTIONAL_OPSET, DEFAULT_OPSET, ORT_COMPLETE_OPSET)
# where exporter.symbolic_helper's signature helpers change the ONNX they emit (Slice takes
# inputs at 10; Clip, Pad and the sequence ops at 11; Squeeze/Unsqueeze/ReduceSum axes at 13;
# the other Reduce* axes at 18): op tables run representative cases there too
HELPER_OPSETS = (10, 11, 13, 18)


def opsets_below(opset: int) -> tuple[int, ...]:
    """Every opset from the base below ``opset``: where a behaviour that needs it is refused."""
    return tuple(range(MIN_OPSET, opset))


def opsets_from(opset: int) -> tuple[int, ...]:
    """Every opset from ``opset`` to the newest."""
    return tuple(range(opset, NEWEST + 1))


def around(opset: int, newest: int = NEWEST) -> tuple[int, ...]:
    """The opset before ``opset``, ``opset`` itself and ``newest``: where a behaviour starts."""
    return (opset - 1, opset, newest)


def comparable_with_torch(opsets: Iterable[int]) -> tuple[int, ...]:
    """Those of ``opsets`` torch's TorchScript exporter writes too: for tests comparing with it."""
    return tuple(opset for opset in opsets if opset <= TORCH_EXPORTER_NEWEST)


def dynamic_inputs(**axes: dict[int, str]) -> dict[str, Any]:
    """The ``input_names`` and ``dynamic_axes`` export options for the inputs named in ``axes``,
    in that order (an empty dict names an input without dynamic axes)."""
    return {"input_names": list(axes), "dynamic_axes": {name: dims for name, dims in axes.items() if dims}}


class Wrap(torch.nn.Module):
    """A module around a function of tensors, so op tests can trace plain functions."""

    def __init__(self, fn: Callable[..., object]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> object:
        return self.fn(*args)


def export_to_bytes(model: Any, args: Any, **kwargs: Any) -> tuple[bytes, ir.Model]:
    buffer = io.BytesIO()
    onnx_model = exporter.export(model, args, buffer, **kwargs)
    return buffer.getvalue(), onnx_model


def run_model(model: bytes | ir.Model, inputs: Sequence[Any]) -> list[Any]:
    """Run in onnxruntime on the flattened model inputs (those the export dropped as unused are
    left out: exporter.verify.kept_inputs), with its graph optimizations off, so the result is
    what the model means, not what this CPU's fused kernels compute (integer QDQ fusions saturate on CPUs
    without VNNI; tests of fusions say so in their names). Where onnxruntime has no kernel for
    an op at this opset (it runs opset 28 but has no QuantizeLinear-28), onnx's reference
    evaluator runs instead, so the exported model is still checked against torch. A model
    not written by an export (a test's own graph) passes the same checks as an exported file."""
    data = model if isinstance(model, bytes) else ir.to_proto(model).SerializeToString()
    onnx_checks.check_unless_saved(data)
    try:
        outputs = run_onnxruntime(data, inputs, optimize=False)
    except Exception as error:  # noqa: BLE001 - only the missing-kernel case is retried
        if "Could not find an implementation" not in str(error):
            raise
        return run_reference(data, inputs)
    _run_in_reference_too(data, inputs, outputs)
    return outputs


def _run_in_reference_too(data: bytes, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
    """The second runtime (tests/reference_runs.py): onnx's reference evaluator runs a small
    model too, and must agree with onnxruntime."""
    if not reference_runs.enabled():
        return
    import onnx

    proto = onnx.load_from_string(data)
    fed = _numpy_inputs(proto, inputs)
    survey = os.environ.get("EXPORTER_REFERENCE_SURVEY")
    if survey:
        reference_runs.record(survey, proto, fed, outputs)
        return
    if reference_runs.ineligible(proto, fed) is not None:
        return
    try:
        reference = reference_runs.run(proto, fed)
    except reference_runs.NotImplementedByEvaluator:
        return
    reference_runs.assert_runtimes_agree(reference, outputs)


def _numpy_inputs(proto: Any, inputs: Sequence[Any]) -> list[Any]:
    """The inputs ``proto`` still takes (exporter.verify.kept_inputs) as the reference evaluator
    takes them: numpy arrays, a list of them for a sequence input, bfloat16 as float."""

    def as_numpy(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            value = value.detach()
            return (value.float() if value.dtype == torch.bfloat16 else value).numpy()
        return value

    kept = kept_inputs({p.key: p.value for p in proto.metadata_props}, inputs)
    return [[as_numpy(item) for item in x] if isinstance(x, (list, tuple)) else as_numpy(x) for x in kept]


def run_reference(data: bytes, inputs: Sequence[Any]) -> list[Any]:
    """Run in onnx's reference evaluator, after the full model check: the semantics of the
    ONNX spec, for the few cases where onnxruntime has no kernel or a bug of its own."""
    import onnx

    proto = onnx.load_from_string(data)
    onnx_checks.check_valid(proto)
    fed = _numpy_inputs(proto, inputs)
    return reference_runs.run(proto, fed)


def assert_outputs_match(actual: Sequence[Any], expected: Any, *, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """Compare onnxruntime's outputs with what eager torch returned: output count first (a
    sequence output counts as its items, flattened like torch's list), then dtype and shape of
    each (never a broadcasting comparison), then values (exact for integers and bools). A
    quantized tensor is its integer values, scale and zero point, as the exported model returns it;
    a Python number is its 0-d tensor (int64, float64, bool), as a scripted model's graph returns it."""
    # a Python number a scripted model returns is a 0-d output, as torch's exporter writes it
    expected = wrap_numbers((expected,))[0]
    expected_flat = [part for t in named_tensors(expected, "out")[0] for part in quantized_output_parts(t)]
    _assert_flat_outputs_match(actual, expected_flat, rtol=rtol, atol=atol)


def _assert_flat_outputs_match(actual: Sequence[Any], expected_flat: list[Any], *, rtol: float, atol: float) -> None:
    # an empty ONNX optional (None) matches torch's None, which named_tensors leaves out
    actual_flat = [leaf for out in actual if out is not None for leaf in (out if isinstance(out, list) else [out])]
    assert len(actual_flat) == len(expected_flat), f"{len(actual_flat)} outputs, torch returns {len(expected_flat)}"
    for index, (want, got) in enumerate(zip(expected_flat, actual_flat)):
        want_np = want.detach().numpy()
        assert got.dtype == want_np.dtype, f"output {index}: dtype {got.dtype} != torch {want_np.dtype}"
        assert got.shape == want_np.shape, f"output {index}: shape {got.shape} != torch {want_np.shape}"
        if want_np.dtype == np.bool_ or np.issubdtype(want_np.dtype, np.integer):
            np.testing.assert_array_equal(got, want_np, err_msg=f"output {index}")
        else:
            np.testing.assert_allclose(got, want_np, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"output {index}")


def assert_matches_torch(
    model: Any,
    args: Any,
    *,
    opset: int,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    other_inputs: Sequence[Any] = (),
    reference_evaluator: bool = False,
    **export_kwargs: Any,
) -> ir.Model:
    """Export at ``opset``, run in onnxruntime on ``args`` (and ``other_inputs``), and
    compare dtype, shape and values with eager torch. ``reference_evaluator=True`` runs onnx's
    reference evaluator instead, for a model onnxruntime itself runs wrongly (say why)."""
    data, onnx_model = export_to_bytes(model, args, opset_version=opset, **export_kwargs)
    for example in [args, *other_inputs]:
        positional, kwargs = split_args(example)
        # what the exported graph takes (a Python number as its 0-d tensor), cloned before eager
        # may mutate the inputs
        flat_inputs = [
            [t.clone() for t in x] if isinstance(x, list) else x.clone() for x in flatten_inputs(example, model)
        ]
        with torch.no_grad():
            expected = model(*positional, **kwargs)
        actual = run_reference(data, flat_inputs) if reference_evaluator else run_model(data, flat_inputs)
        assert_outputs_match(actual, expected, rtol=rtol, atol=atol)
    return onnx_model


def assert_runs_match_torch(data: bytes, model: Any, examples: Sequence[Any]) -> None:
    """Run the exported ``data`` on each example as the exported model takes it (a Python number
    as its 0-d tensor, a scripted list argument as one list: capture.inputs.flatten_inputs)
    and compare with eager torch."""
    for example in examples:
        positional, kwargs = split_args(example)
        with torch.no_grad():
            expected = model(*positional, **kwargs)
        assert_outputs_match(run_model(data, flatten_inputs(example, model)), expected)


def assert_file_matches_torch(path: str | os.PathLike[str], model: Any, examples: Sequence[Any]) -> None:
    """For a model written to ``path`` (its external data beside it): the full model check on the
    file, then onnxruntime (optimizations off) on each example against eager torch."""
    import onnx

    onnx.checker.check_model(os.fspath(path), full_check=True)
    for example in examples:
        positional, kwargs = split_args(example)
        with torch.no_grad():
            expected = model(*positional, **kwargs)
        assert_outputs_match(run_onnxruntime(path, flatten_inputs(example, model), optimize=False), expected)


def assert_matches_torch_from(needs: int, model: Any, args: Any, *, opset: int, **kwargs: Any) -> None:
    """:func:`assert_matches_torch` at ``opset`` when it is at least ``needs``, the first opset
    with the ONNX ops the model needs; below it the export must fail naming that opset."""
    if opset < needs:
        with pytest.raises(exporter.ExporterError, match=f"opset {needs}"):
            assert_matches_torch(model, args, opset=opset, **kwargs)
        return
    assert_matches_torch(model, args, opset=opset, **kwargs)


def run_in_fresh_interpreter(code: str) -> Any:
    """Run ``code`` in a new Python process (nothing imported or registered yet) from the
    repository root; it prints one JSON line last, returned parsed."""
    root = pathlib.Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    return json.loads(result.stdout.strip().splitlines()[-1])


def import_transformers() -> Any:
    """transformers, or the test skipped where it is not installed; torchvision is readied
    first where transformers would import one that cannot load (tests/torchvision_shim.py)."""
    transformers = pytest.importorskip("transformers")
    import torchvision_shim

    torchvision_shim.prepare_for_transformers()
    return transformers


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():  # noqa: ANN202 - generator fixture
    """Eager reference runs of small ops are faster on one thread, and much faster when the
    machine is busy (torch's CPU RNN: 65 ms per call with 2 threads under load, 0.5 ms with 1)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(autouse=True, scope="session")
def _every_export_is_valid_onnx():  # noqa: ANN202 - generator fixture
    """Every model an export writes, in any test, passes onnx's full check and strict shape
    inference (tests/onnx_checks.py): exporter.serialization.save is the one place every
    export writes, so no test can skip the check, not even one that never runs its model."""
    original = serialization.save
    serialization.save = onnx_checks.saving_with_checks(original)
    yield
    serialization.save = original
