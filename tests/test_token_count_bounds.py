"""Token counts in products' logs are bounded like native ones (adv56): a count past
``MAX_TOKENS`` (10^12), or an integer past 64 bits (orjson reads it as a float), is a
one-line error that says it is too large, exit 2, not "expected an integer >= 0" and
not a context of 10,000,000,000,000,000,000 tokens in the report."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io.records import MAX_TOKENS
from compaction_audit.io.tokens import count_problem

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"


def test_count_problem_names_the_bound() -> None:
    assert count_problem(None) is None and count_problem(0) is None
    assert count_problem(MAX_TOKENS) is None
    assert count_problem(MAX_TOKENS + 1) == "must be <= 1,000,000,000,000 tokens"
    assert count_problem(1e23) == "must be <= 1,000,000,000,000 tokens"  # 99999...9 read
    for wrong in (-1, 2.5, "820", True, float("inf"), float("nan"), [3]):
        assert count_problem(wrong) == "expected an integer >= 0", wrong


def audit_with(tmp_path: Path, fixture: str, pattern: str, value: str) -> tuple[int, str]:
    text = (FIXTURES / fixture).read_text()
    changed = re.sub(pattern, lambda m: m.expand(r"\g<1>" + value), text, count=1)
    assert changed != text
    path = tmp_path / Path(fixture).name
    path.write_text(changed)
    result = CliRunner().invoke(app, ["audit", str(path)])
    return result.exit_code, result.stderr.strip()


def test_a_claude_code_pre_tokens_past_the_bound_is_an_error(tmp_path: Path) -> None:
    code, err = audit_with(tmp_path, "claude-session.jsonl", r'("preTokens":\s*)\d+',
                           str(10**19))
    assert code == 2
    assert err.endswith(":18: must be <= 1,000,000,000,000 tokens (preTokens)"), err


def test_a_codex_window_past_64_bits_is_too_large(tmp_path: Path) -> None:
    code, err = audit_with(tmp_path, "codex-local.jsonl", r'("model_context_window":\s*)\d+',
                           "99999999999999999999999")
    assert code == 2
    assert "must be <= 1,000,000,000,000 tokens (payload.info.model_context_window)" in err
    code, err = audit_with(tmp_path, "codex-local.jsonl", r'("model_context_window":\s*)\d+',
                           str(MAX_TOKENS))
    assert code in (0, 1), err


def test_a_context_summed_past_the_bound_is_an_error(tmp_path: Path) -> None:
    """adv58: three Claude Code usage counts of 10^12 each were a context of
    3,000,000,000,000 tokens in the report; opencode's input + cache.read likewise."""
    code, err = audit_with(tmp_path, "claude-session.jsonl",
                           r'("input_tokens":)10,"cache_read_input_tokens":9000',
                           f'{MAX_TOKENS},"cache_read_input_tokens":{MAX_TOKENS}')
    assert code == 2
    assert err.endswith(":7: must be <= 1,000,000,000,000 tokens in all (message.usage: "
                        "input_tokens + cache_read_input_tokens + "
                        "cache_creation_input_tokens)"), err
    code, err = audit_with(tmp_path, "opencode/export.json",
                           r'("input": )8200,(?=\s*"output")', f"{MAX_TOKENS},")
    assert code in (0, 1), err  # at the bound, alone
    code, err = audit_with(tmp_path, "opencode/export.json",
                           r'("input": )8200,(\s*"output": 120,\s*"reasoning": 0,\s*"cache": '
                           r'\{\s*"read": )0', f"{MAX_TOKENS},\\g<2>{MAX_TOKENS}")
    assert code == 2 and err.endswith("must be <= 1,000,000,000,000 tokens in all "
                                      "(messages[1].info.tokens: input + cache.read)"), err
