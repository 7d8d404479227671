"""An SQLite store's schema is loaded first in a bounded helper (adv87 #1, #5): what
the byte count of the main file does not see (the ``-wal`` file's pages, trigger
bodies) is bounded before the reader's own connection parses it."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import opencode, sqlite_probe, sqlite_store
from compaction_audit.io.sqlite_store import _uri

REAL = Path(__file__).parent / "fixtures" / "adapters" / "opencode" / "real" / "opencode.db"


def _rows(path: Path) -> int:
    db = sqlite3.connect(path)
    (n,), = db.execute("SELECT count(*) FROM sqlite_master").fetchall()
    db.close()
    return n


def _views_in_wal(folder: Path, n: int) -> Path:
    """The real store in WAL mode with ``n`` views added and left in its ``-wal`` file
    (copied while the writer is open: closing it would checkpoint them into the main
    file), its ``-shm`` beside it."""
    folder.mkdir()
    work = folder / "work.db"
    shutil.copy(REAL, work)
    db = sqlite3.connect(work)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.commit()
    db.execute("PRAGMA writable_schema=ON")
    db.executemany("INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) "
                   "VALUES ('view', ?, ?, 0, ?)",
                   [(f"v{i}", f"v{i}", f"CREATE VIEW v{i} AS SELECT 1") for i in range(n)])
    db.commit()
    for side in ("", "-wal", "-shm"):
        shutil.copy(f"{work}{side}", folder / f"store.db{side}")
    db.close()
    return folder / "store.db"


def test_the_helper_reads_the_schema_as_sqlite_sees_it(tmp_path: Path) -> None:
    """Rows and SQL bytes, the ``-wal`` file's included; the main file's byte count
    sees only the checkpointed schema."""
    from compaction_audit.io.sqlite_schema import schema_entries

    base = _rows(REAL)
    store = _views_in_wal(tmp_path / "w", 40)
    rows, sql = sqlite_probe.schema_cost(_uri(str(store)))  # type: ignore[misc]
    assert rows == base + 40 and sql > 40 * len("CREATE VIEW v0 AS SELECT 1")
    with store.open("rb") as fh:
        assert schema_entries(fh) == base  # the main file alone
    assert sqlite_probe.schema_cost(_uri(str(tmp_path / "none.db"))) == (0, 0)  # SQLite's


def test_a_schema_past_the_bound_in_the_wal_file_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv87 #1: 160,000 views left in the -wal file passed the byte count (56 rows)
    and took 50 s to load.  At the bound the store is read; one row more is refused."""
    base = _rows(REAL)
    monkeypatch.setattr(sqlite_store, "MAX_SCHEMA_ENTRIES", base + 40)
    assert list(opencode.records(str(_views_in_wal(tmp_path / "at", 40))))
    over = _views_in_wal(tmp_path / "over", 41)
    with pytest.raises(LogError, match=rf"store\.db: the SQLite store's schema holds more "
                                       rf"than {base + 40:,} tables, indexes, views and "
                                       r"triggers: not a plain store"):
        list(opencode.records(str(over)))


def test_a_schema_of_too_much_sql_is_refused(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """adv87 #5: ten triggers of long bodies (25 MB) took 2 GB to parse, under the row
    bound.  The SQL bytes are bounded too."""
    path = tmp_path / "long.db"
    shutil.copy(REAL, path)
    db = sqlite3.connect(path)
    db.execute("CREATE VIEW long AS SELECT " + ", ".join(["1"] * 400_000))  # 1.2 MB
    db.commit()
    db.close()
    monkeypatch.setattr(sqlite_store, "MAX_SCHEMA_SQL", 1 << 20)
    with pytest.raises(LogError, match=r"long\.db: the SQLite store's schema holds more "
                                       r"than 1 MiB of SQL: not a plain store"):
        list(opencode.records(str(path)))
    monkeypatch.setattr(sqlite_store, "MAX_SCHEMA_SQL", 2 << 20)
    assert list(opencode.records(str(path)))


def test_a_helper_that_runs_out_refuses_the_store(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """adv87 #1's store: 80,000 views left in the -wal file, whose schema takes SQLite
    seconds of CPU to load (it grows faster than the schema); a helper ended by its CPU
    limit (1 s here) is a refusal, not a read."""
    monkeypatch.setattr(sqlite_probe, "PROBE_CPU_SECONDS", 1)
    store = _views_in_wal(tmp_path / "slow", 80_000)
    with pytest.raises(LogError, match=r"store\.db: loading the SQLite store's schema "
                                       r"took more than 1 s of CPU or 512 MiB of memory: "
                                       r"not a plain store"):
        list(opencode.records(str(store)))
