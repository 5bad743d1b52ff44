"""Cost of ``search_files`` skipping hermes' credentials (``FileTools.credential_of``).

A search asks it of every file it walks (up to 20,000), with the credentials of the user's
homes: four of the home itself, four of ``~/.hermes`` and four of each folder of
``~/.hermes/projects``. Timed with the process's CPU time (``time.process_time``), the best of
several repeats. Run:

    python benchmarks/files_credentials.py [--files 20000] [--projects 0 10 50] [--repeat 3]

It prints, for each number of projects, the time of the walk alone and with the check.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from plugins_builtin.files import FileSettings, FileTools  # noqa: E402
from plugins_builtin.files.scan import walk  # noqa: E402

NAMES = (".env", "auth.json", "serve-token", "mcp-auth")


def tree(root: Path, files: int) -> None:
    """``files`` small files under ``root``, 100 a folder."""
    for number in range(files):
        folder = root / f"d{number // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{number % 100}.txt").write_text("x\n")


def credentials(home: Path, projects: int) -> tuple[Path, ...]:
    """The credential paths of a user with ``projects`` gated projects (none of them present,
    as in most trees searched)."""
    folders = [home / "custom-home", home / ".hermes"]
    folders += [home / ".hermes" / "projects" / f"p{number}" for number in range(projects)]
    return tuple(folder / name for folder in folders for name in NAMES)


def best(seconds: list[float]) -> str:
    return f"{min(seconds):.3f} s"


def main(files: int, projects: list[int], repeat: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "tree"
        root.mkdir()
        tree(root, files)
        print(f"| projects | credential paths | walk of {files} files | walk and check |")
        print("|---|---|---|---|")
        for count in projects:
            tools = FileTools(FileSettings(False, (), credentials=credentials(root, count)))
            walked: list[float] = []
            checked: list[float] = []
            for _ in range(repeat):
                start = time.process_time()
                for _file in walk(root):
                    pass
                walked.append(time.process_time() - start)
                start = time.process_time()
                found = tools.credential_files()
                for file in walk(root):
                    tools.credential_of(file, found)
                checked.append(time.process_time() - start)
            paths = len(tools.settings.credentials)
            print(f"| {count} | {paths} | {best(walked)} | {best(checked)} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--projects", type=int, nargs="+", default=[0, 10, 50])
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    main(arguments.files, arguments.projects, arguments.repeat)
