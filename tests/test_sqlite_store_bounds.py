"""An SQLite store is read with work bounded by its size (issue 11, item 4).

Every store is built here: a table name that is a view, a virtual table or a table
with a generated column is refused before any query runs it; the step and text
budgets stop a read that goes past them.  Each case is a one-line ``FILE:`` error.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import opencode, sqlite_store
from tests.test_adapters_opencode import build_store, export

PLAIN = {
    "session": "CREATE TABLE session (id TEXT, parent_id TEXT, time_updated INT, data TEXT)",
    "message": "CREATE TABLE message (id TEXT, session_id TEXT, time_created INT, data TEXT)",
    "part": "CREATE TABLE part (id TEXT, session_id TEXT, message_id TEXT, data TEXT)",
}
COUNTING_VIEW = (  # 200,000 sessions out of a few kilobytes: finite, so the old reader ends
    "CREATE VIEW session AS WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n "
    "WHERE k < 200000) SELECT 'ses' || k AS id, NULL AS parent_id, k AS time_updated, "
    "'{}' AS data FROM n")


def store_with(path: Path, **replaced: str) -> Path:
    """A store whose tables are :data:`PLAIN` except the statements in ``replaced``."""
    db = sqlite3.connect(path)
    for name, sql in PLAIN.items():
        db.execute(replaced.get(name, sql))
    db.commit()
    db.close()
    return path


def read_error(path: Path) -> str:
    with pytest.raises(LogError) as info:
        list(opencode.records(str(path)))
    return str(info.value)


def test_a_view_in_place_of_a_table_is_refused_before_it_runs(tmp_path: Path) -> None:
    path = store_with(tmp_path / "view.db", session=COUNTING_VIEW)
    assert read_error(path) == (f"{path}: the SQLite store's session is a view, not a plain "
                                "table: refusing to run it")


def test_a_virtual_table_is_refused(tmp_path: Path) -> None:
    path = store_with(tmp_path / "virtual.db", message="CREATE VIRTUAL TABLE message USING "
                      "fts5(id, session_id, time_created, data)")
    assert read_error(path) == (f"{path}: the SQLite store's message is a virtual table, "
                                "not a plain table: refusing to run it")


def test_a_generated_column_is_refused(tmp_path: Path) -> None:
    path = store_with(tmp_path / "generated.db", part=(
        "CREATE TABLE part (id TEXT, session_id TEXT, message_id TEXT, data TEXT "
        "GENERATED ALWAYS AS (printf('%.*c', 5000000, 'x')) VIRTUAL)"))
    assert read_error(path) == (f"{path}: the SQLite store's table part has generated "
                                "columns (data): refusing to compute them")


def test_a_missing_table_is_still_named(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute(PLAIN["session"])
    db.commit()
    db.close()
    assert read_error(path) == f"{path}: cannot read the SQLite store: no such table: message"


def test_the_step_budget_interrupts_a_read(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = build_store(tmp_path / "plain.db", [export()])
    assert len(list(opencode.records(str(path)))) > 1  # within the real budget
    monkeypatch.setattr(sqlite_store, "MIN_STEPS", 0)
    monkeypatch.setattr(sqlite_store, "STEPS_PER_BYTE", 0)  # a budget of no steps
    monkeypatch.setattr(sqlite_store, "_PROGRESS_EVERY", 1)
    assert read_error(path) == (f"{path}: reading the SQLite store took more than 0 "
                                "SQLite steps (0 per byte of the file): not a plain store")


def test_the_text_budget_stops_a_read(tmp_path: Path) -> None:
    path = build_store(tmp_path / "plain.db", [export()])
    size = sqlite_store.input_bytes(str(path))
    with sqlite_store.BoundedStore(str(path)) as db:
        assert db.max_text == 2 * size + 65536
        assert db.max_steps == max(1 << 24, 50 * size)
        db.max_text = 10
        with pytest.raises(LogError) as info:
            list(db.rows("SELECT * FROM part"))
    assert str(info.value) == (f"{path}: reading the SQLite store returned more than 10 "
                               "bytes of text (2 per byte of the file): not a plain store")


def test_a_store_named_jsonl_in_a_directory_gives_exit_2(tmp_path: Path) -> None:
    """The store is recognised by content: the view bomb named ``run.jsonl`` inside an
    audited directory is an unreadable trace, not a hang."""
    logs = tmp_path / "logs"
    logs.mkdir()
    store_with(logs / "run.jsonl", session=COUNTING_VIEW.replace("200000", "4000000000000"))
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", str(logs)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert "run.jsonl: the SQLite store's session is a view" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_a_sparse_wal_buys_no_budget_and_no_internal_error(tmp_path: Path) -> None:
    """A 3 GiB hole as the store's -wal file takes no disk: it adds nothing to the
    budgets, and SQLite's length limit is never asked above a C int (it was
    'internal error: OverflowError')."""
    store = store_with(tmp_path / "s.db")
    plain = sqlite_store.input_bytes(str(store))
    with open(f"{store}-wal", "wb") as wal:
        wal.truncate(3 << 30)
    assert sqlite_store.input_bytes(str(store)) == plain
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "-q",
                           str(store)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode in (0, 1, 2)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_a_fifo_beside_the_store_is_refused_before_sqlite_opens_it(tmp_path: Path) -> None:
    """SQLite opens ``-journal`` before any query: a FIFO there blocked the audit in the
    open, past SIGTERM.  Any of the three side files that exists and is not a regular
    file is a one-line error."""
    store = store_with(tmp_path / "s.db")
    os.mkfifo(f"{store}-journal")
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "-q",
                           str(store)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2
    assert "its -journal file is not a regular file" in done.stderr


def _with_views(tmp_path: Path, n: int) -> Path:
    """The real opencode store of the fixtures with ``n`` views written straight into
    its schema (as a hostile file is made: no ``CREATE VIEW`` parses them)."""
    import shutil

    path = tmp_path / f"views-{n}.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "adapters" / "opencode" / "real"
                / "opencode.db", path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("PRAGMA writable_schema=ON")
    db.executemany("INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) "
                   "VALUES ('view', ?, ?, 0, ?)",
                   [(f"v{i}", f"v{i}", f"CREATE VIEW v{i} AS SELECT 1") for i in range(n)])
    db.commit()
    db.close()
    return path


def test_the_schema_is_counted_from_the_file_s_bytes(tmp_path: Path) -> None:
    """schema_entries walks the schema b-tree (leaf and interior pages) to the count
    SQLite gives; past the limit it says limit + 1."""
    from compaction_audit.io.sqlite_schema import schema_entries

    for n in (0, 3_000):
        path = _with_views(tmp_path, n)
        db = sqlite3.connect(path)
        (truth,), = db.execute("SELECT count(*) FROM sqlite_master").fetchall()
        db.close()
        with path.open("rb") as fh:
            assert schema_entries(fh) == truth
            assert schema_entries(fh, limit=truth - 1) == truth  # limit + 1
            assert schema_entries(fh, limit=10) == 11
    with (tmp_path / "empty.db").open("wb+") as fh:
        assert schema_entries(fh) == 0  # no header: SQLite's to refuse


def test_a_store_whose_schema_is_past_the_limit_is_refused_before_sqlite_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv86 #2: 160,000 views in a 10 MB store took 72 s to load, before any query the
    step budget could stop.  At the limit the store is read; one more row is refused."""
    path = _with_views(tmp_path, 0)
    db = sqlite3.connect(path)
    (rows,), = db.execute("SELECT count(*) FROM sqlite_master").fetchall()
    db.close()
    monkeypatch.setattr(sqlite_store, "MAX_SCHEMA_ENTRIES", rows + 40)
    assert list(opencode.records(str(_with_views(tmp_path, 40))))  # at the limit: read
    with pytest.raises(LogError, match=rf"views-41\.db: the SQLite store's schema holds "
                                       rf"more than {rows + 40:,} tables, indexes, views "
                                       r"and triggers: not a plain store"):
        list(opencode.records(str(_with_views(tmp_path, 41))))
