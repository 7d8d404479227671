"""A version pin lost at a fold, then its package installed without it (adv123 #5).

The log, by hand: round 0 holds the pin's span (``u1``, a person's unless said), round 1
folds it into S ("Set up the build.") and evicts it, round 2 runs the call ``t1``.
lost-rule-violated (CA307) names the call that installs the package with no version
or another one; the same version keeps the pin.
"""

from __future__ import annotations

from typing import Any

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.unpinned import pins
from tests.logs import LogWriter, rnd

PIN = "Pin numpy==1.26.4, numpy 2.x breaks our C extension."


@pytest.mark.parametrize(("text", "kind", "want"), [
    ("numpy==1.26.4", "version", ("numpy", "1.26.4")),
    ("left-pad@1.3.0", "version", ("left-pad", "1.3.0")),
    ("Keep requests pinned at 2.31.0", "constraint", ("requests", "2.31.0")),
    ("pin numpy to 1.26.4.", "requirement", ("numpy", "1.26.4")),
    ("1.26.4", "version", None),  # no package named
    ("Keep the timeout at 30000", "constraint", None),
])
def test_what_a_lost_fact_pins(text: str, kind: str, want: tuple[str, str] | None) -> None:
    assert pins(text, kind) == want


def _found(write_log: LogWriter, call: str, rule: str = PIN, source: str = "user",
           between: str | None = None) -> list[str]:
    spans: list[dict[str, Any]] = [{"id": "u1", "tokens": 10, "source": source, "text": rule}]
    later = [{"id": "t1", "tokens": 5, "source": "tool_call:Bash", "text": call}]
    if between is not None:
        later.insert(0, {"id": "u2", "tokens": 5, "source": "user", "text": between})
    log = [rnd(0, spans=spans),
           rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["u1"],
                              "text": "Set up the build."}], evicted=["u1"]),
           rnd(2, spans=later)]
    return [f.message for f in audit(str(write_log(log))).findings if f.code == "CA307"]


@pytest.mark.parametrize(("call", "fires"), [
    ("pip install numpy", True),
    (".venv/bin/pip install -U numpy scipy", True),
    ("pip install 'numpy>=1.26'", True),
    ("uv add numpy", True),
    ("pip install numpy==1.26.4", False),  # the pin kept
    ("pip install numpy-financial", False),  # another package
    ("pip show numpy", False),  # no install
    ("pip install -r requirements.txt", False),
    # adv125 #12: extras keep the pin; an install in a commit message installs nothing
    ("pip install 'numpy[dev]==1.26.4'", False),
    ("git commit -m 'pip install numpy in the docs'", False),
])
def test_an_install_without_the_pin_breaks_it(write_log: LogWriter, call: str,
                                              fires: bool) -> None:
    found = _found(write_log, call)
    assert bool(found) is fires
    if fires:
        assert found[0].endswith("Bash call t1 installed 'numpy' without the pin at round 2")


def test_a_tools_listing_of_versions_pins_nothing(write_log: LogWriter) -> None:
    # pip freeze's "numpy==1.26.4" is what is installed, not a pin
    assert _found(write_log, "pip install numpy", "numpy==1.26.4\nscipy==1.13.0",
                  "tool_result:Bash") == []
    # a person's rule that pins a named package pins
    assert _found(write_log, "pip install -U requests",
                  "Keep requests pinned at 2.31.0; 2.32 broke our proxy auth.")


def test_a_person_who_asks_for_the_upgrade_lifts_the_pin(write_log: LogWriter) -> None:
    assert _found(write_log, "pip install -U numpy", between="Upgrade numpy now.") == []
    assert _found(write_log, "pip install -U numpy", between="The tests are slow.")


def test_an_npm_pin_a_person_wrote_pins(write_log: LogWriter) -> None:
    """adv125 #8: "left-pad@1.3.0" is read as an identifier, not a version."""
    found = _found(write_log, "npm i left-pad", "Keep left-pad@1.3.0, 1.3.1 broke the build.")
    assert found and found[0].endswith("installed 'left-pad' without the pin at round 2")
    assert _found(write_log, "npm i left-pad@1.3.0",
                  "Keep left-pad@1.3.0, 1.3.1 broke the build.") == []
