"""``held_exclusively``: the lock the processes of one user take turns under (the memory, the
cron store). Real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FORKS_IN_A_HELD_LOCK = """
import os, sys, threading, time
from pathlib import Path
from hermes_core._atomic_write import held_exclusively

lock = Path(sys.argv[1])
with held_exclusively(lock):  # the memory's and the cron store's turns
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)

def again():
    with held_exclusively(lock):
        pass

other = threading.Thread(target=again, daemon=True)
other.start()
other.join(10)
os.kill(child, 9)
print("waited" if other.is_alive() else "taken")
"""


def test_a_child_forked_in_a_held_lock_does_not_keep_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FORKS_IN_A_HELD_LOCK, str(tmp_path / "store.lock")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout == "taken\n", done.stderr
