"""The query kernel: the C one (``_kernel.c``) and its numpy reference rank alike, and the C one
is built by the install and loaded only when a search backend is made."""

from __future__ import annotations

import hashlib
import itertools
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from bm25_modules import KERNEL_BUILDABLE, BM25Index, kernel, needs_c_kernel
from bm25_modules import index as index_module
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.search._backend import Admission, ToolDocument
from hermes_core.search._evaluation import catalog_documents, load_catalog, load_queries
from hermes_core.testing import HermesCli

SAAS_QUERIES = Path(__file__).resolve().parents[3] / "benchmarks/data/saas-keyword/queries.jsonl"

# Equivalence-table words (create/add/new, issue/ticket, list/all, get/fetch...) so that
# expansion tokens, with several parts each, are exercised, and words that name groups.
WORDS = [
    "create", "add", "new", "issue", "ticket", "list", "all", "get", "fetch", "read",
    "file", "user", "message", "send", "github", "jira", "zone", "time", "repo", "pull",
]  # fmt: skip
NAMES = [f"tool{n}" for n in range(30)]
words = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
documents = st.builds(
    ToolDocument,
    name=st.builds(
        lambda stem, word, number: f"{stem}_{word}{number}",
        st.sampled_from(["mcp__github__", "mcp__jira__", "", "box__"]),
        st.sampled_from(WORDS),
        st.integers(0, 20),
    ),
    description=words,
    group=st.sampled_from(["github", "jira", "other", "box", "github tools"]),
    parameter_names=st.lists(st.sampled_from(WORDS), max_size=3).map(tuple),
    parameter_descriptions=st.lists(words, max_size=2).map(tuple),
)
queries = st.one_of(
    st.lists(
        st.sampled_from([*WORDS, "absent", "pullrequest", "timezone"]), min_size=1, max_size=5
    ).map(" ".join),
    st.sampled_from(["mcp__github__create_issue3", "create_issue3", "github create issue"]),
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(documents, min_size=1, max_size=6)),
        st.tuples(st.just("remove"), st.lists(documents.map(lambda d: d.name), max_size=6)),
    ),
    max_size=8,
)


def _both_kernels(
    documents: list[ToolDocument],
) -> tuple[BM25Index, BM25Index]:
    return (
        BM25Index(documents, kernel=kernel.KERNELS["c"]),
        BM25Index(documents, kernel=kernel.KERNELS["numpy"]),
    )


def _both(
    initial: list[ToolDocument],
    steps: list[tuple[str, list]],
    compact: int,  # type: ignore[type-arg]
) -> tuple[BM25Index, BM25Index]:
    """Two indexes through the same changes, one a kernel."""
    made = []
    for name in ("c", "numpy"):
        index = BM25Index(initial, compact_min_dead=compact, kernel=kernel.KERNELS[name])
        for operation, payload in steps:
            getattr(index, operation)(payload)
        made.append(index)
    return made[0], made[1]


def test_the_install_builds_the_c_kernel() -> None:
    # hatch_build.py compiles _kernel.c when hermes-core is installed (editable or not).
    if not KERNEL_BUILDABLE:  # no Python.h (python3-dev): the install warned, numpy answers
        assert kernel.IMPLEMENTATION == "numpy"
        assert sorted(kernel.KERNELS) == ["numpy"]
        return
    assert kernel.IMPLEMENTATION == "c", (
        "the C kernel is not in use: it was not built, or built from another _kernel.c; "
        "install hermes-core again (pip install -e .) so hatch_build.py compiles it"
    )
    assert kernel.DEFAULT is kernel.KERNELS["c"]


def test_a_kernel_built_from_another_source_is_not_used(tmp_path: Path) -> None:
    source = tmp_path / "_kernel.c"
    source.write_text("/* today's kernel */\n", encoding="utf-8")
    today = hashlib.sha256(source.read_bytes()).hexdigest()

    assert kernel.built_from(SimpleNamespace(SOURCE_SHA256=today), source)  # type: ignore[arg-type]
    stale = SimpleNamespace(SOURCE_SHA256=hashlib.sha256(b"yesterday's").hexdigest())
    assert not kernel.built_from(stale, source)  # type: ignore[arg-type]
    assert not kernel.built_from(SimpleNamespace(), source)  # type: ignore[arg-type]
    assert kernel.built_from(stale, tmp_path / "absent.c")  # type: ignore[arg-type]


@pytest.mark.slow
@needs_c_kernel
@settings(max_examples=150, deadline=None)
@given(
    initial=st.lists(documents, max_size=25),
    steps=operations,
    compact=st.sampled_from([1, 4, 1024]),
    query=queries,
    limit=st.integers(min_value=1, max_value=12),
    extra=st.lists(documents, max_size=3),
)
def test_c_kernel_ranks_exactly_as_its_numpy_reference(
    initial: list[ToolDocument],
    steps: list[tuple[str, list]],  # type: ignore[type-arg]
    compact: int,
    query: str,
    limit: int,
    extra: list[ToolDocument],
) -> None:
    compiled, reference = _both(initial, steps, compact)
    admissions: tuple[Admission, ...] = ("strict", "lenient", "off")
    for admission in admissions:
        for candidates in ((), extra):
            expected = reference.search(query, limit, admission, extra=candidates)
            # Three ways: the first caches the saturations the others read; the second sums
            # off's tokens not set aside in a column a slot whatever their postings (the C
            # kernel's dense pass); the third prunes whenever off has two tokens or more (its
            # MaxScore). The first two sum a required token's holders by merging at any size.
            for share, sift, dense in ((index_module.PRUNE_SHARE, 0, 2.0),
                                       (index_module.PRUNE_SHARE, 0, 0.0),
                                       (1.0, index_module.SIFT_MIN_SLOTS, 2.0)):  # fmt: skip
                with pytest.MonkeyPatch.context() as patch:
                    patch.setattr(index_module, "PRUNE_SHARE", share)
                    patch.setattr(index_module, "SIFT_MIN_SLOTS", sift)
                    patch.setattr(index_module, "DENSE_SHARE", dense)
                    found = compiled.search(query, limit, admission, extra=candidates)
                assert found == expected


@needs_c_kernel
def test_pruned_off_ranking_equals_scoring_every_tool(data_dir: Path) -> None:
    # The C kernel prunes admission off (MaxScore); its numpy reference scores every holder.
    catalog = catalog_documents(load_catalog(data_dir / "saas_openapi_catalog" / "catalog.json"))
    compiled, reference = _both_kernels(catalog)
    queries = [item.query for item in load_queries(SAAS_QUERIES)]
    queries += ["github users list", "list all", "create new issue ticket", "get"]
    for query in queries:
        # The reference ranks every holder in one total order (score, then registry order), so
        # its top 10 holds its top 1 and 5; the C kernel prunes by the limit, so each is asked.
        expected = reference.search(query, 10, "off")
        for limit in (1, 5, 10):
            assert compiled.search(query, limit, "off") == expected[:limit]


@needs_c_kernel
@pytest.mark.parametrize("sift_min_slots", [0, 65_536])
@pytest.mark.parametrize("admission", ["off", "strict", "lenient"])
def test_a_token_most_tools_hold_is_set_aside_and_ranks_as_scoring_every_tool(
    admission: Admission, sift_min_slots: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The C kernel sets aside a token held by half the tools or more (every tool's "svc" here,
    # "list" in most) and looks up only the documents that may rank, among every holder (off)
    # or among the holders of a required token (strict, lenient; strict with no coverage
    # floor), whose scores, with one required token held by few, it sums by merging postings
    # (index.SIFT_MIN_SLOTS: from 0 tools on, or only in a large index); numpy scores them all.
    monkeypatch.setattr(index_module, "SIFT_MIN_SLOTS", sift_min_slots)
    rng = random.Random(11)
    catalog = [
        ToolDocument(
            f"svc{n // 20}__{'_'.join(rng.sample(WORDS, 2))}_{n}",
            " ".join(rng.choices(WORDS, k=rng.randint(2, 12))) + (" list" if n % 3 else ""),
            f"svc{n // 20}",
            tuple(rng.sample(WORDS, rng.randint(0, 3))),
        )
        for n in range(600)
    ]
    compiled, reference = _both_kernels(catalog)
    queries = ["svc " + " ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(60)]
    queries += ["svc list", "list svc create", "svc", "svc svc issue", "svc12 list"]
    queries += ["svc list tool3_create", "svc3 list github", "list github"]
    for query in queries:
        expected = reference.search(query, 30, admission)  # its top 1 and 5 are prefixes
        for limit in (1, 5, 30):
            assert compiled.search(query, limit, admission) == expected[:limit]


def _crowded_catalog(size: int, seed: int) -> list[ToolDocument]:
    """Every tool of ``size`` holds ``svc`` (set aside under off), and each of WORDS about two
    in five of them (under half: not set aside); every other tool is a copy of the one before
    it but for its number (the same length of name, the same text, the same server): each pair
    scores the same, and ranks in registry order."""
    rng = random.Random(seed)
    catalog: list[ToolDocument] = []
    for n in range(size):
        if n % 2:
            last = catalog[-1]
            copy = f"{last.name[:-4]}{n:04d}"
            catalog.append(ToolDocument(copy, last.description, last.group, last.parameter_names))
            continue
        catalog.append(
            ToolDocument(
                f"svc{n // 20}__{'_'.join(rng.sample(WORDS, 2))}_{n:04d}",
                " ".join(rng.choices(WORDS, k=rng.randint(2, 12))),
                f"svc{n // 20}",
                tuple(rng.sample(WORDS, rng.randint(0, 3))),
            )
        )
    return catalog


@needs_c_kernel
@pytest.mark.parametrize("dense_share", [0.0, 2.0, "default"])
@pytest.mark.parametrize("removed", [0, 40])
def test_off_over_most_of_the_catalog_ranks_as_scoring_every_tool(
    dense_share: float | str, removed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under off, when the tokens not set aside (every tool's "svc" here, or none) have postings
    # for at least index.DENSE_SHARE of the slots, the C kernel adds them into a column a slot and
    # reads every slot once, in order (its dense pass: 0.0 always, 2.0 never, or the
    # default); numpy scores every holder. Ties (each tool and its copy) rank in registry
    # order; removed tools (dead slots) never rank.
    if dense_share != "default":
        monkeypatch.setattr(index_module, "DENSE_SHARE", dense_share)
    monkeypatch.setattr(index_module, "SIFT_MIN_SLOTS", 0)  # nothing set aside: dense too
    rng = random.Random(5)
    catalog = _crowded_catalog(800, 7)
    gone = [document.name for document in rng.sample(catalog, removed)]
    compiled, reference = _both(catalog, [("remove", gone)], 1024)
    queries = ["svc list file", "list file svc", "svc list", "svc file create", "svc list get"]
    queries += ["svc " + " ".join(rng.sample([*WORDS, "list", "file"], 3)) for _ in range(40)]
    # and with no token set aside: the dense pass sifts every holder
    queries += [query.replace("svc", "").strip() for query in queries[:20]]
    for query in queries:
        expected = reference.search(query, 300, "off")  # its top 1, 5 and 30 are prefixes
        for limit in (1, 5, 30, 300):
            assert compiled.search(query, limit, "off") == expected[:limit], (query, limit)
    ties = compiled.search("svc list file", 300, "off")
    assert any(a.score == b.score for a, b in itertools.pairwise(ties))


def _postings_not_set_aside(index: BM25Index, query: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many postings ``query``'s tokens held by fewer than half the tools have (what the C
    kernel weighs against index.DENSE_SHARE), from the arguments the index gives it."""
    seen: list[tuple[object, ...]] = []
    compiled = index._kernel

    class Spy:
        def __getattr__(self, name: str) -> object:
            return getattr(compiled, name)

        def search(self, *arguments: object) -> object:
            seen.append(arguments)
            return compiled.search(*arguments)

    with monkeypatch.context() as patch:
        patch.setattr(index, "_kernel", Spy())
        index.search(query, 5, "off")
    segments, parts = seen[0][0], seen[0][11]
    total = len(index._documents)
    runs: dict[int, int] = {}
    for token, _weight, *terms in parts:  # type: ignore[attr-defined]
        for segment in segments:  # type: ignore[attr-defined]
            offsets, column = np.asarray(segment[2], dtype=np.int64), segment[6]
            if 0 <= terms[column] < len(offsets) - 1:
                run = int(offsets[terms[column] + 1] - offsets[terms[column]])
                runs[token] = runs.get(token, 0) + run
    return sum(run for run in runs.values() if run < total / 2)


@needs_c_kernel
def test_off_ranks_alike_either_side_of_the_dense_pass_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # DENSE_SHARE set to the query's own share of postings (512 slots: every share a
    # fraction exact in binary) takes the dense pass; a posting more, the touched list.
    catalog = _crowded_catalog(512, 3)
    compiled, reference = _both_kernels(catalog)
    for query in ["svc list file", "svc file", "svc list github", "svc zone time", "svc jira"]:
        postings = _postings_not_set_aside(compiled, query, monkeypatch)
        assert 0 < postings < 2 * 512
        for share in (postings / 512, (postings + 1) / 512):
            monkeypatch.setattr(index_module, "DENSE_SHARE", share)
            for limit in (1, 5, 64):
                expected = reference.search(query, limit, "off")
                assert compiled.search(query, limit, "off") == expected, (query, share, limit)


@needs_c_kernel
def test_c_kernel_rejects_postings_that_name_no_document() -> None:
    index = BM25Index(
        [ToolDocument("create_issue", "Create an issue", "github")], kernel=kernel.KERNELS["c"]
    )
    segment = index._segments[0]
    segment.slots = segment.slots.copy()
    segment.slots[:] = 99  # a slot past the index: never read out of bounds
    index._view = None
    segment._cache = None
    with pytest.raises(ValueError, match="out of range"):
        index.search("create", 5, "off")
    # The kernel's working memory is left clean: a good index searches as before.
    segment.slots[:] = 0
    index._view = None
    segment._cache = None
    assert [hit.name for hit in index.search("create", 5, "off")] == ["create_issue"]


@needs_c_kernel
def test_the_dense_pass_rejects_postings_that_name_no_document_and_leaves_its_columns_clean(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A run of the dense pass naming a slot past the index is bad data, never a write past the
    # kernel's working memory; the sums it added before finding it (another token's) are
    # cleared, so the next query ranks as the reference does.
    monkeypatch.setattr(index_module, "DENSE_SHARE", 0.0)
    catalog = _crowded_catalog(400, 9)
    compiled, reference = _both_kernels(catalog)
    segment = compiled._segments[0]
    good = segment.slots.copy()
    bad = good.copy()
    bad[int(segment.offsets[compiled._vocabulary.ids["time"] + 1]) - 1] = 10_000_000
    for query in ["svc get", "svc read", "svc time", "svc github", "svc pull fetch"]:
        segment.slots = bad  # "zone" is summed, then "time" names no document
        compiled._view = None
        segment._cache = None
        with pytest.raises(ValueError, match="out of range"):
            compiled.search("svc zone time", 10, "off")
        segment.slots = good
        compiled._view = None
        segment._cache = None
        for limit in (1, 3, 10):
            assert compiled.search(query, limit, "off") == reference.search(query, limit, "off")


@needs_c_kernel
def test_c_kernel_rejects_a_required_run_that_repeats_a_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Summing a rarely held required token's holders in the order of its run (sift_holders)
    # keeps a sum per posting: a run that names a document twice, as a corrupt index could, is
    # bad data, never a write past the kernel's working memory.
    monkeypatch.setattr(index_module, "SIFT_MIN_SLOTS", 0)
    catalog = [
        ToolDocument(
            f"svc_tool{n}",
            "svc" + (" rare" if n in (3, 4) else "") + " common" * (n % 4 == 0),
            f"group{n % 5}",  # no group named by the query: that would rank otherwise
        )
        for n in range(20)
    ]
    index = BM25Index(catalog, kernel=kernel.KERNELS["c"])
    expected = index.search("svc rare common", 5, "strict")
    assert {hit.name for hit in expected} == {"svc_tool3", "svc_tool4"}
    segment = index._segments[0]
    term = index._vocabulary.ids["rare"]
    start, end = int(segment.offsets[term]), int(segment.offsets[term + 1])
    segment.slots = segment.slots.copy()
    segment.slots[start:end] = segment.slots[start]
    index._view = None
    segment._cache = None
    with pytest.raises(ValueError, match="out of range"):
        index.search("svc rare common", 5, "strict")
    segment.slots[start:end] = [3, 4]
    index._view = None
    segment._cache = None
    assert index.search("svc rare common", 5, "strict") == expected


@pytest.mark.parametrize("command", [["--version"], ["plugins", "list"]])
def test_commands_that_search_nothing_load_no_engine(
    command: list[str], hermes_cli: HermesCli
) -> None:
    probe = (
        "import sys\n"
        "from hermes_core._cli import main\n"
        f"try:\n    main({command!r})\n"
        "except SystemExit:\n    pass\n"
        "loaded = [m for m in sys.modules if m.endswith(('bm25._kernel', 'bm25.index'))]\n"
        "print('LOADED', sorted(loaded), 'numpy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=hermes_cli.work,
        env=hermes_cli.variables(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == "LOADED [] False"
