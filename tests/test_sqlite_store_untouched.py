"""Reading an SQLite store writes nothing beside it (issue 11, class 3; adv17 F3).

``mode=ro`` alone still opens a WAL store's ``-shm`` read-write (SQLite's wal-index:
rewritten as the first connection, and every hard link to it with it) and creates
``-shm`` and ``-wal`` beside a WAL store closed cleanly.  The stores are built here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

from compaction_audit.io.sqlite_store import BoundedStore


def wal_store(folder: Path, name: str = "w.db") -> tuple[Path, sqlite3.Connection]:
    """A WAL store with 300 rows left in its ``-wal`` (not checkpointed), kept open so
    that its ``-wal`` and ``-shm`` stay; the caller copies or closes it."""
    path = folder / name
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.execute("CREATE TABLE t (x INT)")
    db.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(300)])
    db.commit()
    return path, db


def copied_without_shm(tmp_path: Path) -> None:
    """``run/w.db`` and ``run/w.db-wal``: a WAL store copied while open (300 rows in
    its ``-wal``), without its ``-shm``."""
    (tmp_path / "src").mkdir()
    source, db = wal_store(tmp_path / "src")
    (tmp_path / "run").mkdir()
    for side in ("", "-wal"):
        shutil.copyfile(f"{source}{side}", tmp_path / "run" / f"w.db{side}")
    db.close()


def rows(path: Path) -> int:
    with BoundedStore(str(path)) as store:
        return int(store.db.execute("SELECT count(*) FROM t").fetchone()[0])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> dict[str, str]:
    return {p.name: digest(p) for p in sorted(folder.iterdir())}


def test_a_hard_linked_shm_is_not_rewritten(tmp_path: Path) -> None:
    copied_without_shm(tmp_path)
    shm = tmp_path / "run" / "w.db-shm"
    shm.write_bytes(os.urandom(40_000))  # stale: the index SQLite would rebuild in it
    os.link(shm, tmp_path / "run" / "other-name.bin")
    before = listing(tmp_path / "run")
    assert rows(tmp_path / "run" / "w.db") == 300  # the -wal's rows are read
    assert listing(tmp_path / "run") == before


def test_a_clean_wal_store_gets_no_new_files(tmp_path: Path) -> None:
    path, db = wal_store(tmp_path)
    db.close()  # checkpointed: -wal and -shm removed, the file still in WAL mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.db"]
    assert rows(path) == 300
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.db"]


def test_a_wal_without_its_shm_is_read_from_a_private_copy(tmp_path: Path) -> None:
    copied_without_shm(tmp_path)
    before = listing(tmp_path / "run")
    assert rows(tmp_path / "run" / "w.db") == 300
    assert listing(tmp_path / "run") == before  # no -shm created beside it


def test_a_hot_journal_is_not_read_past(tmp_path: Path) -> None:
    """A writer that died mid-transaction left its changes in the file and a hot
    ``-journal``; ``immutable`` skipped SQLite's check and read them, so a failing
    store passed (adv18 F4).  Opened plainly, read-only, SQLite refuses it."""
    import pytest

    from compaction_audit.errors import LogError

    path = tmp_path / "j.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x INT)")
    db.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(300)])
    db.commit()
    db.close()
    pid = os.fork()
    if pid == 0:  # the writer: its pages reach the file, then it dies uncommitted
        child = sqlite3.connect(path, isolation_level=None)
        child.execute("PRAGMA cache_size = 2")
        child.execute("BEGIN")
        child.execute("DELETE FROM t")
        child.execute("CREATE TABLE pad (x BLOB)")
        for _ in range(200):
            child.execute("INSERT INTO pad VALUES (randomblob(4000))")
        os._exit(0)
    os.waitpid(pid, 0)
    assert (tmp_path / "j.db-journal").exists()
    before = listing(tmp_path)
    with pytest.raises(LogError, match="cannot open the SQLite store: attempt to write a "
                       "readonly database"):
        rows(path)
    assert listing(tmp_path) == before


def test_a_sparse_wal_is_not_copied(tmp_path: Path) -> None:
    """A -wal without its -shm is read from a copy; a -wal extended to 200 MB of
    holes made the copy write 200 MB into TMPDIR (adv18 F5)."""
    import pytest

    from compaction_audit.errors import LogError

    copied_without_shm(tmp_path)
    with open(tmp_path / "run" / "w.db-wal", "r+b") as wal:
        wal.truncate(200 << 20)
    with pytest.raises(LogError, match=r"w\.db-wal is a sparse file"):
        rows(tmp_path / "run" / "w.db")
