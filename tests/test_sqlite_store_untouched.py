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

import pytest

from compaction_audit.errors import LogError, UsageError
from compaction_audit.io.opencode import companions
from compaction_audit.io.sqlite_store import BoundedStore
from compaction_audit.outfile import refuse_same_file


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


def hot_journal_store(path: Path) -> None:
    """``path``: a store of 300 rows that a writer changed and died in mid-transaction,
    leaving its pages in the file and a hot ``-journal`` beside it."""
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
    assert Path(f"{path}-journal").exists()


def test_a_hot_journal_is_not_read_past(tmp_path: Path) -> None:
    """A writer that died mid-transaction left its changes in the file and a hot
    ``-journal``; ``immutable`` skipped SQLite's check and read them, so a failing
    store passed (adv18 F4).  Opened plainly, read-only, SQLite refuses it; through a
    symbolic link too, whose name has no ``-journal`` beside it (adv19a F1)."""
    (tmp_path / "real").mkdir()
    path = tmp_path / "real" / "j.db"
    hot_journal_store(path)
    (tmp_path / "link.db").symlink_to("real/j.db")
    before = listing(tmp_path / "real")
    for name in (path, tmp_path / "link.db"):
        with pytest.raises(LogError, match=f"^{name}: cannot open the SQLite store: attempt "
                           "to write a readonly database"):
            rows(name)
    assert listing(tmp_path / "real") == before


def test_a_wal_store_is_read_through_a_symbolic_link(tmp_path: Path) -> None:
    """adv19a F1: the ``-wal`` beside the link's target was not looked for, so the
    store was read ``immutable``, without the rows its ``-wal`` holds."""
    copied_without_shm(tmp_path)
    (tmp_path / "run" / "w.db-shm").write_bytes(os.urandom(40_000))  # stale
    (tmp_path / "link.db").symlink_to("run/w.db")
    before = listing(tmp_path / "run")
    assert rows(tmp_path / "link.db") == 300  # the table and its rows are in the -wal
    assert listing(tmp_path / "run") == before


def test_the_wal_beside_a_link_s_target_is_not_overwritten(tmp_path: Path) -> None:
    """adv19a F2: ``-o real/w.db-wal`` with the store named through a link replaced
    the ``-wal`` (committed rows lost): it is a file SQLite reads with the store."""
    (tmp_path / "real").mkdir()
    path, db = wal_store(tmp_path / "real")
    (tmp_path / "link.db").symlink_to("real/w.db")
    assert f"{path}-wal" in companions(str(tmp_path / "link.db"))
    for side in ("-wal", "-shm"):
        with pytest.raises(UsageError, match=f"is {path}{side}, read along with the input"):
            refuse_same_file(f"{path}{side}", [str(tmp_path / "link.db")])
    db.close()


def test_a_sparse_wal_is_not_copied(tmp_path: Path) -> None:
    """A -wal without its -shm is read from a copy; a -wal extended to 200 MB of
    holes made the copy write 200 MB into TMPDIR (adv18 F5)."""
    copied_without_shm(tmp_path)
    with open(tmp_path / "run" / "w.db-wal", "r+b") as wal:
        wal.truncate(200 << 20)
    with pytest.raises(LogError, match=r"w\.db-wal is a sparse file"):
        rows(tmp_path / "run" / "w.db")
