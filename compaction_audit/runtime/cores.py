"""The cores this process may use, and Polars' thread pool held to them (issue 11,
class 7).  Small: it runs at every start, before Polars loads.

Polars starts one thread per ``POLARS_MAX_THREADS`` (else per core it sees): a job
environment with ``POLARS_MAX_THREADS=100000`` started about 5,000 threads in one
audit, which ran past 16 minutes and held a 2-core machine at a load of 2,600
(adv24), and each thread also costs address space (``addrspace.THREAD_BYTES``).
:func:`cap_polars_threads` holds it to :func:`available_cores`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import MutableMapping

POLARS_THREADS = "POLARS_MAX_THREADS"


def available_cores(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """CPUs this process may run on: its affinity mask where the OS has one, and no
    more than its cgroup's CPU quota allows (:func:`cgroup_cpus`): a pod limited to one
    CPU on a 64-core node started 64 workers (adv22b O4)."""
    cores = max(1, os.cpu_count() or 1)
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        with contextlib.suppress(OSError):
            cores = max(1, len(getaffinity(0)))
    quota = cgroup_cpus(cgroup_root)
    return cores if quota is None else max(1, min(cores, quota))


def cgroup_cpus(root: str = "/sys/fs/cgroup") -> int | None:
    """The CPUs the cgroup quota of this process allows, rounded up, or None without a
    quota: cgroup v2's ``cpu.max`` (``"200000 100000"``: 2; ``"max 100000"``: none),
    else v1's ``cpu/cpu.cfs_quota_us`` over ``cpu/cpu.cfs_period_us`` (-1: none), read
    under ``root`` as a container sees its own cgroup."""
    def read(name: str) -> str | None:
        try:
            with open(os.path.join(root, name), encoding="ascii") as fh:
                return fh.read(64).strip()
        except (OSError, ValueError, UnicodeDecodeError):
            return None

    pair: tuple[str, str | None] | None = None
    v2 = read("cpu.max")
    if v2 is not None:
        quota, _, period = v2.partition(" ")
        pair = (quota, period or None)
    else:
        v1 = read("cpu/cpu.cfs_quota_us")
        if v1 is not None:
            pair = (v1, read("cpu/cpu.cfs_period_us"))
    if pair is None or pair[1] is None:
        return None
    try:
        quota_us, period_us = int(pair[0]), int(pair[1])
    except ValueError:  # "max": no quota
        return None
    if quota_us <= 0 or period_us <= 0:
        return None
    return -(-quota_us // period_us)


def cap_polars_threads(environ: MutableMapping[str, str] | None = None,
                       cgroup_root: str = "/sys/fs/cgroup") -> None:
    """Set ``POLARS_MAX_THREADS`` in ``environ`` (default ``os.environ``: before Polars
    loads, and inherited by every helper) to :func:`available_cores` when it is unset
    while a cgroup quota or the affinity mask allows fewer cores than the machine has,
    larger than that, or not a positive whole number.  A smaller value is kept."""
    env = os.environ if environ is None else environ
    cores = available_cores(cgroup_root)
    value = env.get(POLARS_THREADS, "").strip()
    threads = thread_count(value)
    if threads is not None and threads <= cores:
        return
    if value or cores < (os.cpu_count() or 1):
        env[POLARS_THREADS] = str(cores)


def thread_count(value: str) -> int | None:
    """``value`` of ``POLARS_MAX_THREADS`` as a positive count of threads, None when it
    is not one: ASCII digits only, at most 6 ('²' passes ``isdigit`` and fails
    ``int``; 5,000 digits exceed ``int``'s limit; an Arabic-Indic one passes ``int``
    and fails Polars: adv25 N4)."""
    value = value.strip()
    if value.isascii() and value.isdigit() and len(value) <= 6 and int(value) > 0:
        return int(value)
    return None
