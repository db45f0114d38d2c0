"""Small TorchScript graph utilities shared by the passes.

The read-only queries (the block walk, schemas) live in :mod:`exporter.ts_graph` and the
edits shared with capture in :mod:`exporter.ts_edit`; they are re-exported here so a pass
imports its toolbox from one place.
"""

from __future__ import annotations

from exporter.ts_edit import replace_node
from exporter.ts_graph import has_blocks, schema_of, walk

__all__ = ["walk", "replace_node", "schema_of", "has_blocks"]
