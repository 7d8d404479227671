"""Checks that stopped early at a documented cap (issue 11, class 5).

A few checks compare every item of one list with every item of another that the input
may make both long (a stale summary's newer spans, a lost item's later user messages,
a summary's leaves below its own children).
Each has a cap on the comparisons it makes per session; past it the check stops, and a
:class:`Limit` in the report says so and where (never silently).  The caps are listed
in docs/security.md, "Limits".
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limit"]


@dataclass(frozen=True)
class Limit:
    """One check that stopped at its cap.

    ``check``: what stopped (a rule name, ``asked-again`` for the lost table's
    "asked again" column, or ``recall-survival`` for the closure's survival checks);
    ``cap``: the number of ``unit`` it may make per session;
    ``at``: where it stopped (the first item not checked, its text from the log);
    ``round`` and ``line``: that item's round number and log line (None when unknown);
    ``left``: how many ``left_unit`` were not checked, that one included.
    """

    check: str
    cap: int
    unit: str
    at: str
    round: int | None
    line: int | None
    left: int
    left_unit: str

    def message(self) -> str:
        """One sentence for every report format (``at`` is log text: the renderers
        escape and clip it like any other)."""
        where = f" (round {self.round})" if self.round is not None else ""
        return (f"{self.check} stopped early at its cap of {self.cap:,} {self.unit}, at "
                f"{self.at}{where}: {self.left:,} {self.left_unit} not checked")
