"""Which process ids of this machine are gone (core/processes.py): a zombie (killed, not yet reaped) is."""

import os
import subprocess
import sys
import time

import pytest

from core import processes

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads process states from /proc (Linux)")


def test_a_running_process_is_not_gone_an_exited_one_not_yet_reaped_is_and_so_is_a_reaped_one():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not processes.gone(child.pid)
        assert not processes.gone(os.getpid())
        child.kill()
        deadline = time.monotonic() + 10
        while not processes.gone(child.pid):  # a zombie until waited for: os.kill(pid, 0) still succeeds on it
            assert time.monotonic() < deadline, "a killed child was taken for alive"
            time.sleep(0.01)
        os.kill(child.pid, 0)  # the zombie is still there, as `os.kill` sees it
    finally:
        child.kill()
        child.wait()
    assert processes.gone(child.pid)


def test_a_process_no_supervisor_started_follows_no_parent():
    # The test runner, like `make run`'s one process, was not started as a worker.
    assert processes.follow_parent() is False
