"""A Dask scheduler address that is malformed, or a port that accepts and never answers, is one
line and bounded work (issue 28, item 11)."""

import socket
import threading

import pytest

pytest.importorskip("distributed", reason="the dask extra is not installed")

from tokworkbench.cli import main  # noqa: E402
from tokworkbench.engines import dask_count  # noqa: E402


@pytest.mark.parametrize("address", ["tcp://", "tcp://host:notaport", ":::", "tcp://[::1", "tcp://h:99999"])
def test_a_malformed_scheduler_address_is_one_line(address, tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n", encoding="utf-8")
    assert main(["count", "--engine", "dask", "--scheduler", address, "-o", str(tmp_path / "c.npz"), str(corpus)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tokworkbench: error: {address!r} is not a Dask scheduler address; write it as tcp://HOST:PORT "
                   "(e.g. tcp://10.0.0.5:8786)"]


def test_a_port_that_accepts_and_never_answers_is_refused_after_the_connect_timeout():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    held = []
    threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()
    try:
        with pytest.raises(dask_count.ClusterError, match="accepts connections but sent no handshake"):
            dask_count.connect(f"tcp://127.0.0.1:{server.getsockname()[1]}", timeout=0.5)
    finally:
        server.close()
        for conn, _ in held:
            conn.close()
