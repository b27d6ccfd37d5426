"""Units as strategies: what a query returns, from the entries its channels found. One module
per unit, each a ``base.UnitStrategy`` subclass registered in ``UNITS`` (``ragsift.registry``)
by ``@register_unit`` on its class; single-shot retrieval, multi-hop, reranking and
``rank_documents`` all go through it.

| unit | key | returned |
|---|---|---|
| ``parent`` (default) | parent id | the whole section (small-to-big) |
| ``child`` | entry id | the entry's own span (flat chunks) |
| ``document`` | document id | the document's sections joined |
| ``window`` | entry id | the entry widened by ``window_sentences`` sentences, overlapping windows merged |
| ``auto`` | entry id | entries, or their section, or their document, by the share found (auto-merging) |

A new unit is a module with a ``UnitStrategy`` subclass decorated with ``@register_unit`` (its
rule on the settings in its ``check``, as ``auto`` has: chunk entries only), imported below.
"""
# isort: off
# one line per unit: importing its module registers it (in this order: the order errors list them)
from ragsift.retrieve.units import parent  # noqa: F401
from ragsift.retrieve.units import child  # noqa: F401
from ragsift.retrieve.units import document  # noqa: F401
from ragsift.retrieve.units import window  # noqa: F401
from ragsift.retrieve.units import auto  # noqa: F401
# isort: on
from ragsift.retrieve.units.auto import AutoUnit, auto_merge
from ragsift.retrieve.units.base import UNITS, UnitStrategy, check_unit, considered, register_unit, unit_strategy
from ragsift.retrieve.units.child import ChildUnit
from ragsift.retrieve.units.document import DocumentUnit
from ragsift.retrieve.units.parent import ParentUnit
from ragsift.retrieve.units.window import WindowUnit, window_bounds

__all__ = ["UNITS", "UnitStrategy", "ParentUnit", "ChildUnit", "DocumentUnit", "WindowUnit", "AutoUnit",
           "auto_merge", "check_unit", "considered", "register_unit", "unit_strategy", "window_bounds"]
