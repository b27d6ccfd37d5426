"""Units as strategies: what a query returns, from the entries its channels found. One module
per unit (``parent``, the default, is the base class, ``base.UnitStrategy``, named here), each
registered in ``UNITS`` (``ragsift.registry``) below; single-shot retrieval, multi-hop,
reranking and ``rank_documents`` all go through it.

| unit | key | returned |
|---|---|---|
| ``parent`` (default) | parent id | the whole section (small-to-big) |
| ``child`` | entry id | the entry's own span (flat chunks) |
| ``document`` | document id | the document's sections joined |
| ``window`` | entry id | the entry widened by ``window_sentences`` sentences, overlapping windows merged |
| ``auto`` | entry id | entries, or their section, or their document, by the share found (auto-merging) |

A new unit is a module with a ``UnitStrategy`` subclass, its member of ``config.Unit``, and
its instance in the tuple registered below (with its rule in ``config`` if it has one, as
``auto`` has: chunk entries only).
"""
from ragsift.config import Unit
from ragsift.errors import ConfigError
from ragsift.registry import Registry
from ragsift.retrieve.units.auto import AutoUnit, auto_merge
from ragsift.retrieve.units.base import UnitStrategy, considered
from ragsift.retrieve.units.child import ChildUnit
from ragsift.retrieve.units.document import DocumentUnit
from ragsift.retrieve.units.window import WindowUnit, window_bounds


class ParentUnit(UnitStrategy):
    """``parent``: the whole section a matching entry belongs to (small-to-big, the default)."""

    name = Unit.PARENT


UNITS: Registry[UnitStrategy] = Registry("unit", ConfigError)
for _u in (ParentUnit(), ChildUnit(), DocumentUnit(), WindowUnit(), AutoUnit()):
    UNITS.add(_u.name.value, lambda u=_u: u)


def unit_strategy(unit: Unit | str) -> UnitStrategy:
    """The strategy of a unit (one shared object per unit: they hold no state)."""
    return UNITS.make(Unit(unit).value)


__all__ = ["UNITS", "UnitStrategy", "ParentUnit", "ChildUnit", "DocumentUnit", "WindowUnit", "AutoUnit",
           "auto_merge", "considered", "unit_strategy", "window_bounds"]
