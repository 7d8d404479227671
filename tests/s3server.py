"""A local S3-compatible server for tests: moto's server mode on 127.0.0.1, a free port.

:func:`s3_server` starts it, points obstore at it through the environment variables
obstore reads (``AWS_ENDPOINT_URL``, ``AWS_ALLOW_HTTP``, test credentials) and yields
an :class:`S3`; tests skip, saying why, when moto or obstore is not installed
(``pip install -e '.[test]'`` installs both).
"""

from __future__ import annotations

import logging
import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
       "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true",
       "AWS_EC2_METADATA_DISABLED": "true"}


@dataclass
class S3:
    """The running server: ``endpoint`` (http://127.0.0.1:PORT) and a boto3 client."""

    endpoint: str
    client: Any

    def bucket(self, name: str) -> None:
        """Create bucket ``name``."""
        self.client.create_bucket(Bucket=name)

    def upload(self, root: Path, bucket: str, prefix: str = "") -> int:
        """Put every file under ``root`` at ``prefix`` + its path below ``root``;
        returns the count."""
        files = sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            self.client.put_object(Bucket=bucket, Key=prefix + path.relative_to(root).as_posix(),
                                   Body=path.read_bytes())
        return len(files)


def _reset(endpoint: str) -> None:
    """Empty moto's in-process state (every bucket of every server in this process)."""
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()


@contextmanager
def s3_server() -> Iterator[S3]:
    """Run moto's S3 server for the block, with the environment set for obstore
    (restored afterwards, and obstore's per-bucket stores forgotten both ways)."""
    pytest.importorskip("obstore", reason="obstore is not installed (the [cloud] extra)")
    server_mod = pytest.importorskip(
        "moto.server", reason="moto's server is not installed (the [test] extra)")
    import boto3

    from compaction_audit.io.remote import store_for

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    _reset(endpoint)  # moto keeps its buckets in this process, server or not
    saved = {k: os.environ.get(k) for k in [*ENV, "AWS_ENDPOINT_URL"]}
    os.environ.update(ENV, AWS_ENDPOINT_URL=endpoint)
    store_for.cache_clear()
    try:
        yield S3(endpoint, boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                        aws_access_key_id="testing",
                                        aws_secret_access_key="testing"))
    finally:
        store_for.cache_clear()
        _reset(endpoint)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()
