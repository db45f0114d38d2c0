"""Pre-passes over the TorchScript graph, run in order before emission."""

from exporter.passes.lower import lower
from exporter.passes.remove_inplace import check_no_inplace, remove_inplace
from exporter.passes.scalar_type_analysis import scalar_type_analysis
from exporter.ts_graph import locator

__all__ = ["lower", "remove_inplace", "check_no_inplace", "scalar_type_analysis", "run_all"]


def run_all(graph) -> None:  # noqa: ANN001 - torch._C.Graph
    """The pre-pass pipeline: lower, then make it functional, then make scalar types explicit.
    Errors and warnings name nodes as emission does: with the user's call sites of torch code
    inlined into the model (the locator capture registered for ``graph``)."""
    lower(graph)
    remove_inplace(graph, locate=locator(graph))
    scalar_type_analysis(graph)
