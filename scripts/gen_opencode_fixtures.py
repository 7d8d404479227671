"""Write a real opencode session with an automatic compaction, offline (issue 15).

Runs opencode from the npm registry (``opencode-ai``) against a model server on
127.0.0.1 that this script runs itself: an OpenAI-compatible ``/v1/chat/completions``
that streams canned replies, so no network and no account are needed.  The model is
declared in ``opencode.json`` with a 3,000-token context, and the fake reply to the
second prompt reports a 2,900-token prompt, so opencode compacts the session
automatically (a user message with a ``compaction`` part, the ``compaction`` agent's
``summary`` message, the synthetic "Continue ..." message and the reply to it).  A
third prompt follows the compaction.

The session is exported with ``opencode export`` to
``tests/fixtures/adapters/opencode/real/export.json``, and opencode's SQLite store is
copied (checkpointed and vacuumed) to ``real/opencode.db``.  Usage::

    npm install --prefix /tmp/oc opencode-ai
    python scripts/gen_opencode_fixtures.py /tmp/oc/node_modules/.bin/opencode

Nothing here is run by the tests; the files it wrote are committed.
"""

from __future__ import annotations

import http.server
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "adapters" / "opencode" / "real"
PROMPTS = ["The staging port is 8443 and the deploy key is ops-7731.",
           "Rollbacks must use the blue-green switch, never a redeploy.",
           "What is left to do?"]


def reply_for(body: dict[str, Any]) -> tuple[str, int]:
    """The canned reply to one request and the prompt size its usage reports."""
    messages = body.get("messages") or []
    system = json.dumps([m for m in messages if m.get("role") == "system"]).lower()
    last = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    asked = json.dumps(last.get("content")).lower()
    if "title generator" in system:
        return "Deploy notes", 50
    if "summarization agent" in system or "what did we do so far" in asked:  # compaction
        return "We are preparing the staging deploy. Rollbacks use the blue-green switch.", 900
    if "blue-green" in asked:
        return "Understood: rollbacks go through the blue-green switch, never a redeploy.", 2900
    if "continue if you have next steps" in asked:
        return "Nothing else is pending; the deploy can go ahead.", 1200
    if "left to do" in asked:
        return "Only the deploy itself is left.", 1300
    return "Noted: staging listens on port 8443 and the deploy key is ops-7731.", 800


class FakeModel(http.server.BaseHTTPRequestHandler):
    """Streams one chat completion (text, stop, usage) in the OpenAI SSE format."""

    def log_message(self, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length", 0))
        text, prompt = reply_for(json.loads(self.rfile.read(size) or b"{}"))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        base = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        for chunk in (
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                  "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": 20,
                                              "total_tokens": prompt + 20}}):
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main(opencode: str) -> None:
    """Run the three prompts on one session; export it and copy the store to :data:`OUT`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, work = root / "home", root / "work"
        (home / ".config" / "opencode").mkdir(parents=True)
        work.mkdir()
        (work / "opencode.json").write_text(json.dumps({
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible", "name": "Fake",
                "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "offline"},
                "models": {"m": {"name": "m", "limit": {"context": 3000, "output": 500}}}}},
            "model": "fake/m", "small_model": "fake/m", "autoupdate": False,
            "share": "disabled"}))
        env = {**os.environ, "HOME": str(home), "PWD": str(work)}  # opencode reads PWD
        for i, prompt in enumerate(PROMPTS):
            subprocess.run([opencode, "run", *(["-c"] if i else []), prompt], cwd=work,
                           env=env, check=True, timeout=300, stdout=subprocess.DEVNULL)
        listed = subprocess.run([opencode, "session", "list", "--format", "json"], cwd=work,
                                env=env, check=True, timeout=60, capture_output=True)
        session = json.loads(listed.stdout)[0]["id"]
        exported = subprocess.run([opencode, "export", session], cwd=work, env=env,
                                  check=True, timeout=60, capture_output=True)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "export.json").write_bytes(exported.stdout)
        store = home / ".local" / "share" / "opencode" / "opencode.db"
        target = OUT / "opencode.db"
        target.unlink(missing_ok=True)
        with sqlite3.connect(store) as src, sqlite3.connect(target) as dst:
            src.backup(dst)
        dst = sqlite3.connect(target)
        dst.execute("PRAGMA journal_mode=DELETE")  # one file: reading it creates no -shm
        dst.execute("VACUUM")
        dst.close()
    server.shutdown()
    print(f"wrote {OUT / 'export.json'} and {target}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "opencode")
