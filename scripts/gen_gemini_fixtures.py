"""Write real Gemini CLI session files with a compression, offline (issue 15).

Runs the Gemini CLI from the npm registry with its hidden ``--fake-responses-non-strict``
option (model replies read from a file: no network, no account) and a low
``model.compressionThreshold`` (0.1), in a throw-away HOME, three times on one session:

1. states two facts (a port and a key);
2. ``--resume latest``: states a constraint;
3. ``--resume latest --approval-mode yolo``: asks for a listing; the fake reply calls
   ``list_directory`` and reports a 120,000-token prompt, so before the next request
   Gemini CLI compresses the history (two ``generateContent`` calls: the snapshot and
   its verification) and writes the ``$set.messages`` rewrite.

The session file and the local telemetry log (``gemini_cli.chat_compression``) are
copied to ``tests/fixtures/adapters/gemini-cli/`` as ``compression.jsonl`` and
``telemetry.log`` (only its compression records).  A second session adds a fourth run
(``--resume``, a ``read_file`` call reporting 130,000 tokens) and so a second
compression over the first snapshot: ``two-compressions/session.jsonl``.  Usage::

    npm install --prefix /tmp/gem @google/gemini-cli
    python scripts/gen_gemini_fixtures.py /tmp/gem/node_modules/.bin/gemini [WHICH]

``WHICH`` is ``all`` (default), ``compression`` or ``two-compressions``.

Nothing here is run by the tests; the fixtures it wrote are committed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "adapters" / "gemini-cli"
MODEL = "gemini-2.5-flash"  # named, so that no routing call asks the fake model first
SNAPSHOT = """<state_snapshot>
<overall_goal>Prepare the staging deploy.</overall_goal>
<key_knowledge>Rollbacks use the blue-green switch.</key_knowledge>
<file_system_state>CWD: project root, files listed.</file_system_state>
<recent_actions>Listed the project directory.</recent_actions>
<task_state>1. [IN PROGRESS] Check the deploy config.</task_state>
</state_snapshot>"""


def stream(parts: list[dict[str, object]], prompt_tokens: int) -> dict[str, object]:
    """One fake streamed reply whose usage reports ``prompt_tokens``."""
    return {"method": "generateContentStream", "response": [{
        "candidates": [{"content": {"role": "model", "parts": parts},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": 20,
                          "totalTokenCount": prompt_tokens + 20}}]}


def generate(text: str) -> dict[str, object]:
    """One fake non-streamed reply (the compression's summary calls)."""
    return {"method": "generateContent", "response": {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 5000, "candidatesTokenCount": 300,
                          "totalTokenCount": 5300}}}


RUNS = [
    ("The staging port is 8443 and the deploy key is ops-7731.", [], [
        stream([{"text": "Noted: staging listens on port 8443 and the deploy key is "
                         "ops-7731."}], 3000)]),
    ("Rollbacks must use the blue-green switch, never a redeploy.", ["--resume", "latest"], [
        stream([{"text": "Understood. Rollbacks go through the blue-green switch, never "
                         "a redeploy."}], 6000)]),
    ("List the project files.", ["--resume", "latest", "--approval-mode", "yolo"], [
        stream([{"functionCall": {"name": "list_directory", "args": {"dir_path": "."}}}],
               120_000),
        generate(SNAPSHOT), generate(SNAPSHOT),
        stream([{"text": "The directory holds deploy.yaml; I will check it next."}], 9000)]),
]


def compression_events(text: str) -> str:
    """Only the ``gemini_cli.chat_compression`` records of a telemetry log (the whole
    log holds every prompt and is large), in the log's own layout."""
    decoder = json.JSONDecoder()
    kept: list[str] = []
    pos = 0
    while (pos := text.find("{", pos)) != -1:
        obj, end = decoder.raw_decode(text, pos)
        attrs = obj.get("attributes") or {}
        if attrs.get("event.name") == "gemini_cli.chat_compression":
            kept.append(text[pos:end])
        pos = end
    return "\n".join(kept) + "\n"


SNAPSHOT_2 = """<state_snapshot>
<overall_goal>Prepare the staging deploy.</overall_goal>
<key_knowledge>Rollbacks use the blue-green switch. deploy.yaml sets the port.</key_knowledge>
<file_system_state>CWD: project root; read deploy.yaml.</file_system_state>
<recent_actions>Listed the project directory, read deploy.yaml.</recent_actions>
<task_state>1. [DONE] Check the deploy config. 2. [TODO] Deploy.</task_state>
</state_snapshot>"""

SECOND = [
    ("Check the deploy config.", ["--resume", "latest", "--approval-mode", "yolo"], [
        stream([{"functionCall": {"name": "read_file", "args": {"file_path": "deploy.yaml"}}}],
               130_000),
        generate(SNAPSHOT_2), generate(SNAPSHOT_2),
        stream([{"text": "deploy.yaml sets port 8443, as you said."}], 11000)]),
]
"""A fourth run for ``two-compressions/``: a second compression, whose history holds the
first snapshot (Gemini CLI asks the model to integrate it)."""


def run_session(gemini: str, runs: list[tuple[str, list[str], list[dict[str, object]]]],
                session_out: Path) -> None:
    """Run ``runs`` on one session in a throw-away HOME; copy the session file to
    ``session_out`` and the compression records of the telemetry beside it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, project = root / "home", root / "proj"
        (home / ".gemini").mkdir(parents=True)
        project.mkdir()
        (project / "deploy.yaml").write_text("port: 8443\n")
        telemetry = root / "telemetry.log"
        (home / ".gemini" / "settings.json").write_text(json.dumps({
            "model": {"compressionThreshold": 0.1},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "telemetry": {"enabled": True, "target": "local", "outfile": str(telemetry)},
            "privacy": {"usageStatisticsEnabled": False}}))
        env = {**os.environ, "HOME": str(home), "GEMINI_API_KEY": "offline-fake"}
        for i, (prompt, flags, replies) in enumerate(runs):
            fake = root / f"fake{i}.jsonl"
            fake.write_text("".join(json.dumps(r) + "\n" for r in replies))
            subprocess.run([gemini, "-m", MODEL, *flags, "-p", prompt, "--skip-trust",
                            "--fake-responses-non-strict", str(fake)],
                           cwd=project, env=env, check=True, timeout=300,
                           stdout=subprocess.DEVNULL)
        sessions = sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))
        if len(sessions) != 1:
            sys.exit(f"expected one session file, found {len(sessions)}")
        session_out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sessions[0], session_out)
        (session_out.parent / "telemetry.log").write_text(
            compression_events(telemetry.read_text()))
        print(f"wrote {session_out} and the telemetry beside it")


def main(gemini: str, which: str = "all") -> None:
    """Write ``compression.jsonl`` (three runs) and ``two-compressions/session.jsonl``
    (four runs), each with its ``telemetry.log``; ``which`` picks one of them."""
    if which in ("all", "compression"):
        run_session(gemini, RUNS, OUT / "compression.jsonl")
    if which in ("all", "two-compressions"):
        run_session(gemini, RUNS + SECOND, OUT / "two-compressions" / "session.jsonl")


if __name__ == "__main__":
    main(*sys.argv[1:3]) if len(sys.argv) > 1 else main("gemini")
