/* The bm25 engine's query loop in C: one call ranks a query over the index's postings.
 *
 * The same rule as kernel_numpy.py (its reference, in numpy; tests/search/test_kernel.py checks
 * that both give identical results). Written against the CPython API only: arrays arrive as
 * contiguous buffers (the buffer protocol), so neither numpy's C API nor any build dependency
 * is needed. hatch_build.py compiles it at install time, with -ffp-contract=off so that every
 * floating-point operation is the one written here, in this order (no fused multiply-add):
 * scores are bit-identical to the numpy implementation.
 *
 * search(segments, slot_count, lengths, alive, name_sizes, groups, extra_lengths,
 *        extra_name_sizes, extra_groups, scratch, params, parts, tokens, required, floor,
 *        exact, named, limit, version, bounds, prune_share, hits, sift_slots, dense_share)
 *     -> [(slot, score, matched tokens), ...], or with hits the hit objects
 *
 * See search() in kernel_numpy.py for what each argument holds.
 *
 * postings(terms, docs, documents, vocabulary_size) and word_table() / word_ids(table, text)
 * serve the build (build.py holds their reference forms, sorted_postings and PyWordTable).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FIELDS 5
/* Looking `candidates` slots up in a run of `run` postings costs about a posting scanned a
 * step of each binary search; scanning costs a posting a posting: the cheaper is taken. */
static inline Py_ssize_t bits_of(Py_ssize_t run) {
    Py_ssize_t bits = 1;
    while (run >>= 1) bits++;
    return bits;
}

static inline Py_ssize_t lookup_cost(Py_ssize_t run, Py_ssize_t candidates) {
    /* The candidates come sorted: each search gallops on from the last one's place. */
    Py_ssize_t search = candidates ? candidates * (1 + bits_of(run / candidates)) : 0;
    return search < run ? search : run;
}

/* The position of `slot` in the sorted slots[*at, end), or -1; *at moves to where the next,
 * larger slot's search starts (exponential steps, then a binary search). */
static inline Py_ssize_t gallop(const int32_t *slots, Py_ssize_t *at, Py_ssize_t end,
                                Py_ssize_t slot) {
    Py_ssize_t low = *at;
    if (low >= end) return -1;
    if (slots[low] >= slot) return slots[low] == slot ? low : -1;
    Py_ssize_t step = 1, high = low + 1; /* slots[low] < slot */
    while (high < end && slots[high] < slot) {
        low = high;
        step <<= 1;
        high = low + step;
    }
    if (high > end) high = end;
    while (high - low > 1) { /* slots[low] < slot <= slots[high] (or high is the end) */
        Py_ssize_t middle = low + (high - low) / 2;
        if (slots[middle] < slot)
            low = middle;
        else
            high = middle;
    }
    *at = high;
    return high < end && slots[high] == slot ? high : -1;
}


/* The working memory of a query, per slot: a Cell (score, counts, flags), the multi-part
 * token's sum, and the touched lists. Outside a call all of it is zero, so a call clears only
 * what it touched. */
#define CANDIDATE 1 /* flags: ranked under strict/lenient, or pruned off (being scored) */
#define EXACT 2     /* an exact-name slot: listed first, never ranked */
#define DONE 16     /* pruned off: a candidate of the first round, scored already */
#define HELD 4      /* touched by the current multi-part token */
#define IN_NAME 8   /* the current multi-part token is in the name */
#define NAME_HIT ((uint32_t)1 << 16) /* counts: tokens held below, name hits above */
#define MAX_TOKENS 65535
#define COVERAGE_HITS 16
#define COVERAGE_SIZES 64
/* The touched list has room for one entry more than there are slots (SPARE bytes, taken
 * from the header): scan_cached writes a posting's slot at the end of the list, without a
 * branch, and moves the end only for a slot's first posting; with every slot on the list, the
 * spare entry takes the writes. */
#define SPARE ((Py_ssize_t)sizeof(int32_t))
#define SCRATCH_HEADER 8
/* A slot's working columns that every posting touches, side by side: one cache line a posting
 * (as three arrays they were three, and a query's postings land anywhere). */
typedef struct {
    double score;    /* the sum of the token scores so far, in token order */
    uint32_t counts; /* distinct tokens held, plus NAME_HIT a token in the name */
    uint8_t flags;
} Cell;
#define SCRATCH_SLOT ((Py_ssize_t)(sizeof(Cell) + sizeof(double) + 2 * sizeof(int32_t)))

typedef struct {
    Py_ssize_t first, size;
    const int64_t *offsets;
    Py_ssize_t terms; /* offsets holds terms + 1 entries */
    const int32_t *slots;
    const uint16_t *counts;
    Py_ssize_t postings;
    int dead, column;
    double *cache;     /* per posting, its saturation once its term's stamp is the version */
    uint32_t *stamps;  /* per term; none: the cache holds every saturation (and no counts) */
} Segment;

typedef struct {
    Py_ssize_t token;
    double weight;
    Py_ssize_t term[3]; /* its term id in the segments of each column, or -1 */
} Part;

typedef struct {
    Segment *segments;
    Py_ssize_t segment_count, slot_count, total;
    const int32_t *lengths, *extra_lengths, *name_sizes, *extra_name_sizes, *groups,
        *extra_groups;
    const uint8_t *alive;
    double k1, one_minus_b, boost, factors[FIELDS], weights[FIELDS];
    Part *parts;
    Py_ssize_t part_count, token_count;
    Py_ssize_t *token_start; /* the parts of token t are token_start[t] .. token_start[t+1] */
    Cell *cells;          /* a slot's score, counts and flags */
    double *tmp;          /* the current multi-part token's score, its parts in order */
    int32_t *touched;     /* the slots holding a token (off) or the candidates */
    Py_ssize_t touched_count;
    int32_t *token_touched; /* the slots the current multi-part token touched */
    Py_ssize_t token_touched_count;
    const uint8_t *aside; /* per token, 1: set aside (not scored by score_tokens), or NULL */
    double coverage[COVERAGE_HITS * COVERAGE_SIZES];
    const int64_t *named;
    Py_ssize_t named_count;
    uint32_t version;
    Py_ssize_t sift_slots; /* sift_holders (and sift_dense, nothing set aside) from here on */
    double dense_share;    /* sift_dense from this many postings a slot on */
} Query;

/* Buffers are released in one place: every view taken goes on this list. */
typedef struct {
    Py_buffer views[64];
    int count;
} Views;

static void release_views(Views *views) {
    for (int i = 0; i < views->count; i++) PyBuffer_Release(&views->views[i]);
    views->count = 0;
}

static PyObject *corrupt(const char *what) {
    PyErr_Format(PyExc_ValueError, "bm25 kernel: %s", what);
    return NULL;
}

/* A contiguous buffer of items of `itemsize` bytes; its item count in *count. */
static const void *buffer_of(Views *views, PyObject *object, Py_ssize_t itemsize, int writable,
                             Py_ssize_t *count, const char *name) {
    if (views->count >= (int)(sizeof(views->views) / sizeof(views->views[0]))) {
        PyErr_SetString(PyExc_ValueError, "bm25 kernel: too many buffers");
        return NULL;
    }
    Py_buffer *view = &views->views[views->count];
    if (PyObject_GetBuffer(object, view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0)
        return NULL;
    views->count++;
    if (view->len % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "bm25 kernel: %s is not an array of %zd-byte items",
                     name, itemsize);
        return NULL;
    }
    *count = view->len / itemsize;
    return view->buf;
}

static inline const int32_t *lengths_of(const Query *q, Py_ssize_t slot) {
    return slot < q->slot_count ? q->lengths + FIELDS * slot
                                : q->extra_lengths + FIELDS * (slot - q->slot_count);
}

/* x / (x + k1) for posting i of segment s, x the BM25F pseudo-frequency: the sum over fields,
 * in field order, of count * (weight / (1 - b + length * b / average length)). A field the
 * document does not hold the token in adds 0.0, which changes nothing, so it is skipped. */
static inline double saturation(const Query *q, const Segment *s, Py_ssize_t i, Py_ssize_t slot) {
    const uint16_t *counts = s->counts + FIELDS * i;
    const int32_t *lengths = lengths_of(q, slot);
    double x = 0.0;
    for (int f = 0; f < FIELDS; f++) {
        if (counts[f]) {
            double denominator = q->one_minus_b + (double)lengths[f] * q->factors[f];
            x += (double)counts[f] * (q->weights[f] / denominator);
        }
    }
    return x / (x + q->k1);
}

/* The postings of a part in segment s: [*start, *end); 0 when it has none, -1 on bad data.
 * With a cache, the run's saturations are computed once per version of the index, each
 * stored negated when the token is in the document's name (a saturation is positive, so its
 * sign is free to say that). */
static int run_of(const Query *q, const Segment *s, const Part *p, Py_ssize_t *start,
                  Py_ssize_t *end) {
    Py_ssize_t term = p->term[s->column];
    if (term < 0 || term >= s->terms) return 0;
    int64_t low = s->offsets[term], high = s->offsets[term + 1];
    if (low < 0 || low > high || high > s->postings) return -1;
    *start = (Py_ssize_t)low;
    *end = (Py_ssize_t)high;
    if (s->stamps != NULL && high > low && s->stamps[term] != q->version) {
        for (Py_ssize_t i = *start; i < *end; i++) {
            Py_ssize_t slot = s->slots[i];
            if ((size_t)(slot - s->first) >= (size_t)s->size) return -1;
            double value = saturation(q, s, i, slot);
            s->cache[i] = s->counts[FIELDS * i] ? -value : value;
        }
        s->stamps[term] = q->version;
    }
    return high > low;
}

/* The saturation of posting i, and whether its token is in the document's name. */
static inline double posting(const Query *q, const Segment *s, Py_ssize_t i, Py_ssize_t slot,
                             int *in_name) {
    if (s->cache != NULL) {
        double value = s->cache[i];
        *in_name = value < 0.0;
        return fabs(value);
    }
    *in_name = s->counts[FIELDS * i] != 0;
    return saturation(q, s, i, slot);
}

static inline int dead_at(const Query *q, const Segment *s, Py_ssize_t slot) {
    return s->dead && slot < q->slot_count && !q->alive[slot];
}

static inline int in_segment(const Segment *s, Py_ssize_t slot) {
    return (size_t)(slot - s->first) < (size_t)s->size;
}

/* The first position of the sorted slots[start, end) whose slot is at least `slot`. */
static inline Py_ssize_t first_from(const int32_t *slots, Py_ssize_t start, Py_ssize_t end,
                                    Py_ssize_t slot) {
    while (start < end) {
        Py_ssize_t middle = start + (end - start) / 2;
        if (slots[middle] < slot)
            start = middle + 1;
        else
            end = middle;
    }
    return start;
}

/* The position of `slot` in the sorted slots[start, end), or -1. */
static inline Py_ssize_t find(const int32_t *slots, Py_ssize_t start, Py_ssize_t end,
                              Py_ssize_t slot) {
    Py_ssize_t low = first_from(slots, start, end, slot);
    return low < end && slots[low] == slot ? low : -1;
}

/* Adds a part's term score to a slot: directly when the token has one part (0.0 + c is c),
 * else to the token's own sum, which finish_token adds once all its parts are in. In `off`
 * (`collect`), a slot's first token puts it on the touched list. */
static inline void add(Query *q, Py_ssize_t slot, int single, int collect, double value,
                       int in_name) {
    if (single) {
        if (collect && q->cells[slot].counts == 0)
            q->touched[q->touched_count++] = (int32_t)slot;
        q->cells[slot].score += value;
        q->cells[slot].counts += 1 + (in_name ? NAME_HIT : 0);
        return;
    }
    uint8_t flags = q->cells[slot].flags;
    if (!(flags & HELD)) {
        flags |= HELD;
        q->token_touched[q->token_touched_count++] = (int32_t)slot;
    }
    q->tmp[slot] += value;
    q->cells[slot].flags = flags | (in_name ? IN_NAME : 0);
}

static void finish_token(Query *q, int collect) {
    for (Py_ssize_t j = 0; j < q->token_touched_count; j++) {
        Py_ssize_t slot = q->token_touched[j];
        uint8_t flags = q->cells[slot].flags;
        if (collect && q->cells[slot].counts == 0)
            q->touched[q->touched_count++] = (int32_t)slot;
        q->cells[slot].score += q->tmp[slot];
        q->cells[slot].counts += 1 + (flags & IN_NAME ? NAME_HIT : 0);
        q->tmp[slot] = 0.0;
        q->cells[slot].flags = flags & (uint8_t)~(HELD | IN_NAME);
    }
    q->token_touched_count = 0;
}

/* Every posting of [start, end) adds to its document; `filtered`: only to the candidates.
 * Called with constant flags: one loop a case. */
static inline int scan(Query *q, const Segment *s, const Part *p, int single, int filtered,
                       Py_ssize_t start, Py_ssize_t end) {
    for (Py_ssize_t i = start; i < end; i++) {
        Py_ssize_t slot = s->slots[i];
        if (!in_segment(s, slot)) return -1;
        if (filtered ? !(q->cells[slot].flags & CANDIDATE) : (s->dead && dead_at(q, s, slot)))
            continue;
        int in_name;
        double value = posting(q, s, i, slot, &in_name);
        add(q, slot, single, !filtered, p->weight * value, in_name);
    }
    return 0;
}

static int compare_slots(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sort the candidates touched[from, count) by slot (for gallop), unless they are already. */
static void sort_candidates(Query *q, Py_ssize_t from) {
    for (Py_ssize_t j = from + 1; j < q->touched_count; j++) {
        if (q->touched[j - 1] > q->touched[j]) {
            qsort(q->touched + from, (size_t)(q->touched_count - from), sizeof(int32_t),
                  compare_slots);
            return;
        }
    }
}

/* scan() for the common case: a token of one part, its saturations cached, no dead slots.
 * The columns are read through local restrict pointers, so the compiler keeps them in
 * registers (through `q` it would reload them a posting, not knowing they do not alias). */
static int scan_cached(Query *q, const Segment *s, double weight, int filtered,
                       Py_ssize_t start, Py_ssize_t end) {
    const int32_t *restrict slots = s->slots;
    const double *restrict cache = s->cache;
    Cell *restrict cells = q->cells;
    int32_t *restrict touched = q->touched;
    Py_ssize_t first = s->first, size = s->size, count = q->touched_count;
    int collect = !filtered;
    int bad = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_ssize_t slot = slots[i];
        if ((size_t)(slot - first) >= (size_t)size) {
            bad = -1;
            break;
        }
        double value = cache[i];
        uint32_t held = cells[slot].counts;
        if (filtered) {
            /* Without a branch too (a run is scanned when most of its postings are
             * candidates'): another slot adds 0.0 to its 0.0 and nothing to its count, and
             * x * 1.0 is x. */
            uint32_t take = cells[slot].flags & CANDIDATE;
            cells[slot].score += weight * fabs(value) * (double)take;
            cells[slot].counts = held + take * (1 + (value < 0.0 ? NAME_HIT : 0));
            continue;
        }
        if (collect) { /* without a branch: which way it goes is a coin toss a posting */
            touched[count] = (int32_t)slot; /* kept when it is the slot's first: see SPARE */
            count += !held;
        }
        cells[slot].score += weight * fabs(value);
        cells[slot].counts = held + 1 + (value < 0.0 ? NAME_HIT : 0);
    }
    q->touched_count = count;
    return bad;
}

/* Score every token: `filtered` keeps to the candidates (the touched list), scanning a run or
 * searching it for each candidate, whichever is cheaper; otherwise every posting adds to its
 * document. Returns -1 on bad data. */
static int score_tokens(Query *q, int filtered, Py_ssize_t from) {
    Py_ssize_t candidates = q->touched_count - from;
    if (filtered) sort_candidates(q, from);
    for (Py_ssize_t t = 0; t < q->token_count; t++) {
        if (q->aside != NULL && q->aside[t]) continue;
        int single = q->token_start[t + 1] - q->token_start[t] == 1;
        for (Py_ssize_t k = q->token_start[t]; k < q->token_start[t + 1]; k++) {
            const Part *p = &q->parts[k];
            for (Py_ssize_t g = 0; g < q->segment_count; g++) {
                const Segment *s = &q->segments[g];
                Py_ssize_t start, end;
                int found = run_of(q, s, p, &start, &end);
                if (found < 0) return -1;
                if (!found) continue;
                /* A run held by every slot of its segment (the `svc` of every synthetic tool) is
                 * its slots in order: a slot's posting is found at its offset, no search. */
                int every = end - start == s->size;
                if (filtered && (every || lookup_cost(end - start, candidates) < end - start)) {
                    Py_ssize_t at = start;
                    for (Py_ssize_t j = from; j < q->touched_count; j++) {
                        Py_ssize_t slot = q->touched[j];
                        if (!in_segment(s, slot)) continue;
                        Py_ssize_t i = start + (slot - s->first);
                        if (!every || s->slots[i] != slot) i = gallop(s->slots, &at, end, slot);
                        if (i < 0) continue;
                        int in_name;
                        double value = posting(q, s, i, slot, &in_name);
                        add(q, slot, single, 0, p->weight * value, in_name);
                    }
                    continue;
                }
                int bad;
                if (single && s->cache != NULL && !s->dead)
                    bad = filtered ? scan_cached(q, s, p->weight, 1, start, end)
                                   : scan_cached(q, s, p->weight, 0, start, end);
                else if (filtered)
                    bad = single ? scan(q, s, p, 1, 1, start, end) : scan(q, s, p, 0, 1, start, end);
                else
                    bad = single ? scan(q, s, p, 1, 0, start, end) : scan(q, s, p, 0, 0, start, end);
                if (bad < 0) return -1;
            }
        }
        if (!single) finish_token(q, !filtered);
    }
    return 0;
}

/* Mark a slot a candidate (once). */
static inline void nominate(Query *q, Py_ssize_t slot) {
    if (!(q->cells[slot].flags & (CANDIDATE | DONE))) {
        q->cells[slot].flags |= CANDIDATE;
        q->touched[q->touched_count++] = (int32_t)slot;
    }
}

/* The holders of token t become candidates; with `scoring` (t of one part, the first token
 * scored: see rank_aside), each with t's score added as it is nominated. Returns -1 on bad
 * data. */
static int nominate_holders(Query *q, Py_ssize_t t, int scoring) {
    for (Py_ssize_t k = q->token_start[t]; k < q->token_start[t + 1]; k++) {
        const Part *p = &q->parts[k];
        for (Py_ssize_t g = 0; g < q->segment_count; g++) {
            const Segment *s = &q->segments[g];
            Py_ssize_t start, end;
            int found = run_of(q, s, p, &start, &end);
            if (found < 0) return -1;
            for (Py_ssize_t i = start; found && i < end; i++) {
                Py_ssize_t slot = s->slots[i];
                if (!in_segment(s, slot)) return -1;
                if (dead_at(q, s, slot)) continue;
                if (!scoring) {
                    nominate(q, slot);
                    continue;
                }
                if (q->cells[slot].flags & (CANDIDATE | DONE)) continue;
                int in_name;
                double value = posting(q, s, i, slot, &in_name);
                nominate(q, slot);
                q->cells[slot].score += p->weight * value;
                q->cells[slot].counts += 1 + (in_name ? NAME_HIT : 0);
            }
        }
    }
    return 0;
}

/* The holders of the required tokens become the candidates. Returns -1 on bad data. */
static int touch_required(Query *q, const char *required) {
    for (Py_ssize_t t = 0; t < q->token_count; t++)
        if (required[t] && nominate_holders(q, t, 0) < 0) return -1;
    return 0;
}

/* How many postings token t has (its holders, dead ones counted). */
static Py_ssize_t postings_of(const Query *q, Py_ssize_t t) {
    Py_ssize_t total = 0;
    for (Py_ssize_t k = q->token_start[t]; k < q->token_start[t + 1]; k++) {
        for (Py_ssize_t g = 0; g < q->segment_count; g++) {
            const Segment *s = &q->segments[g];
            Py_ssize_t term = q->parts[k].term[s->column];
            if (term >= 0 && term < s->terms)
                total += (Py_ssize_t)(s->offsets[term + 1] - s->offsets[term]);
        }
    }
    return total;
}

/* What scoring every token for `candidates` slots costs, in postings scanned. */
static Py_ssize_t filtered_cost(const Query *q, const Py_ssize_t *runs, Py_ssize_t candidates) {
    Py_ssize_t cost = 0;
    for (Py_ssize_t t = 0; t < q->token_count; t++) cost += lookup_cost(runs[t], candidates);
    return cost;
}

/* Back to all zeros: every slot this call touched. */
static void clear(Query *q, PyObject *exact) {
    for (Py_ssize_t j = 0; j < q->touched_count; j++) {
        Py_ssize_t slot = q->touched[j];
        q->cells[slot].score = 0.0;
        q->cells[slot].counts = 0;
        q->cells[slot].flags = 0;
    }
    for (Py_ssize_t j = 0; j < q->token_touched_count; j++) {
        Py_ssize_t slot = q->token_touched[j];
        q->tmp[slot] = 0.0;
        q->cells[slot].flags = 0;
    }
    for (Py_ssize_t j = 0; exact != NULL && j < PyList_GET_SIZE(exact); j++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyList_GET_ITEM(exact, j));
        if (slot >= 0 && slot < q->total) q->cells[slot].flags = 0;
    }
    q->touched_count = q->token_touched_count = 0;
}

/* One document looked up in every part's postings: its score and name hits, and which tokens
 * it holds (held[t]), added in the same order as score_tokens adds them. */
static void score_one(const Query *q, Py_ssize_t slot, char *held, double *score,
                      int32_t *name_hits) {
    *score = 0.0;
    *name_hits = 0;
    memset(held, 0, (size_t)q->token_count);
    for (Py_ssize_t t = 0; t < q->token_count; t++) {
        double sum = 0.0;
        int any = 0, name = 0;
        for (Py_ssize_t k = q->token_start[t]; k < q->token_start[t + 1]; k++) {
            /* A part has its postings in the segments of one column; a slot is in one of
             * them (the expansion runs span every slot, in a column of their own). */
            for (Py_ssize_t g = 0; g < q->segment_count; g++) {
                const Segment *s = &q->segments[g];
                Py_ssize_t start, end;
                if (!in_segment(s, slot) || run_of(q, s, &q->parts[k], &start, &end) <= 0)
                    continue;
                Py_ssize_t i = find(s->slots, start, end, slot);
                if (i < 0) continue;
                int in_name;
                double value = posting(q, s, i, slot, &in_name);
                sum += q->parts[k].weight * value;
                any = 1;
                name |= in_name;
            }
        }
        if (any) {
            *score += sum;
            *name_hits += name;
            held[t] = 1;
        }
    }
}

/* The name coverage factor 1 + boost * (name hits / name size): from a table filled once a
 * call for small counts (the same operations, so the same values: a division saved a
 * document), else computed. */
static inline double coverage_factor(const Query *q, int32_t name_hits, int32_t size) {
    double factor;
    if (name_hits >= 0 && name_hits < COVERAGE_HITS && size > 0 && size < COVERAGE_SIZES) {
        double *cell = (double *)&q->coverage[name_hits * COVERAGE_SIZES + size];
        if (*cell != 0.0) return *cell; /* 0.0: not computed yet (a factor is not 0 then) */
        factor = 1.0 + q->boost * ((double)name_hits / (double)size);
        if (factor != 0.0) *cell = factor;
        return factor;
    }
    return 1.0 + q->boost * ((double)name_hits / (double)size);
}

static inline double boosted(const Query *q, Py_ssize_t slot, double score, int32_t name_hits) {
    int32_t size = slot < q->slot_count ? q->name_sizes[slot]
                                        : q->extra_name_sizes[slot - q->slot_count];
    return score * coverage_factor(q, name_hits, size);
}

static inline int first_of(const Query *q, Py_ssize_t slot) {
    if (!q->named_count) return 0;
    int32_t group = slot < q->slot_count ? q->groups[slot] : q->extra_groups[slot - q->slot_count];
    for (Py_ssize_t i = 0; i < q->named_count; i++)
        if (q->named[i] == group) return 1;
    return 0;
}

typedef struct {
    int first;
    double score;
    Py_ssize_t slot;
} Ranked;

/* Whether a ranks before b: a named group's tools first, then by score, then registry order. */
static inline int before(const Ranked *a, const Ranked *b) {
    if (a->first != b->first) return a->first > b->first;
    if (a->score != b->score) return a->score > b->score;
    return a->slot < b->slot;
}

/* A heap of the best `limit` seen so far, the worst at the root. */
static void sift_down(Ranked *heap, Py_ssize_t count, Py_ssize_t at) {
    for (;;) {
        Py_ssize_t worst = at, left = 2 * at + 1, right = left + 1;
        if (left < count && before(&heap[worst], &heap[left])) worst = left;
        if (right < count && before(&heap[worst], &heap[right])) worst = right;
        if (worst == at) return;
        Ranked swap = heap[at];
        heap[at] = heap[worst];
        heap[worst] = swap;
        at = worst;
    }
}

static void sift_up(Ranked *heap, Py_ssize_t at) {
    while (at > 0) {
        Py_ssize_t parent = (at - 1) / 2;
        if (!before(&heap[parent], &heap[at])) return;
        Ranked swap = heap[at];
        heap[at] = heap[parent];
        heap[parent] = swap;
        at = parent;
    }
}

static int compare_ranked(const void *a, const void *b) {
    return before((const Ranked *)a, (const Ranked *)b) ? -1 : 1;
}

/* The k-th best boosted score among the ranked slots of touched[from, to), or -inf. */
static double kth_best(const Query *q, Py_ssize_t from, Py_ssize_t to, Py_ssize_t k) {
    double *best = PyMem_Malloc(sizeof(double) * (size_t)(k + 1));
    if (best == NULL) return -INFINITY; /* no pruning: the same result, more work */
    Py_ssize_t count = 0;
    for (Py_ssize_t j = from; j < to; j++) {
        Py_ssize_t slot = q->touched[j];
        if (q->cells[slot].flags & EXACT) continue;
        const Cell *cell = &q->cells[slot];
        double value = boosted(q, slot, cell->score, (int32_t)(cell->counts >> 16));
        Py_ssize_t at;
        if (count < k) {
            at = count++;
            best[at] = value;
            while (at > 0 && best[(at - 1) / 2] > best[at]) { /* a min-heap: the k-th at 0 */
                double swap = best[at];
                best[at] = best[(at - 1) / 2];
                best[(at - 1) / 2] = swap;
                at = (at - 1) / 2;
            }
        } else if (value > best[0]) {
            best[0] = value;
            for (at = 0;;) {
                Py_ssize_t low = at, left = 2 * at + 1, right = left + 1;
                if (left < count && best[left] < best[low]) low = left;
                if (right < count && best[right] < best[low]) low = right;
                if (low == at) break;
                double swap = best[at];
                best[at] = best[low];
                best[low] = swap;
                at = low;
            }
        }
    }
    double found = count < k ? -INFINITY : best[0];
    PyMem_Free(best);
    return found;
}

static inline int is_expansion(const Query *q, Py_ssize_t t) {
    return q->token_start[t + 1] - q->token_start[t] != 1 ||
           q->parts[q->token_start[t]].term[2] >= 0;
}

/* Admission off, pruned (MaxScore, exact). A token's score is below its bound (a saturation
 * is below 1), and a document's name coverage is at most 1 but for the expansion tokens it
 * holds in its name (each plain token in a name is one of its distinct tokens): so a document
 * holding only tokens whose bounds add up to R scores at most R (1 + boost min(m, 1 + e)),
 * m those tokens, e the expansions among them. The holders of the highest-bound token are
 * scored first (all tokens, in order); their k-th best is a floor of the final k-th best;
 * the fewest highest-bound tokens whose rest cannot reach it are the essential ones, and only
 * their holders are scored. Only when the highest-bound token is held by at most `share` of
 * the slots (its holders are scored first, so they must be few). Returns 1 when it ranked the
 * query, 0 when the caller must score every posting (nothing to prune: the state is as it
 * was), -1 on bad data. */
static void unscore(Query *q) {
    for (Py_ssize_t j = 0; j < q->touched_count; j++) {
        Py_ssize_t slot = q->touched[j];
        q->cells[slot].score = 0.0;
        q->cells[slot].counts = 0;
        q->cells[slot].flags &= EXACT;
    }
    q->touched_count = 0;
}

static int prune_off(Query *q, const double *bounds, Py_ssize_t limit, double share) {
    Py_ssize_t tokens = q->token_count;
    if (bounds == NULL || tokens < 2 || limit <= 0 || q->named_count || q->boost < 0.0) return 0;
    Py_ssize_t *order = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)tokens * 2);
    if (order == NULL) return 0;
    Py_ssize_t *runs = order + tokens, every = 0;
    for (Py_ssize_t t = 0; t < tokens; t++) { /* by bound, highest first (few tokens) */
        runs[t] = postings_of(q, t);
        every += runs[t];
        Py_ssize_t at = t;
        while (at > 0 && bounds[order[at - 1]] < bounds[t]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = t;
    }
    int outcome = -1;
    if ((double)runs[order[0]] > share * (double)q->total) {
        outcome = 0; /* the highest-bound token is held by too many: a first round costs */
        goto finish;
    }
    /* The first round: the holders of the highest-bound tokens, until there are `limit` of
     * them (so that a k-th best exists), if scoring them costs well under scoring all. */
    Py_ssize_t essential = 0, nominated = 0;
    while (essential < tokens - 1 && nominated <= limit) nominated += runs[order[essential++]];
    if (nominated <= limit || nominated + filtered_cost(q, runs, nominated) > every / 2) {
        outcome = 0; /* nothing to prune: the caller scores every posting */
        goto finish;
    }
    for (Py_ssize_t j = 0; j < essential; j++)
        if (nominate_holders(q, order[j], 0) < 0) goto finish;
    if (score_tokens(q, 1, 0) < 0) goto finish;
    Py_ssize_t first_round = q->touched_count;
    double threshold = kth_best(q, 0, first_round, limit);
    double rest = 0.0;
    Py_ssize_t expansions = 0, first_essential = essential;
    for (Py_ssize_t j = essential; j < tokens; j++) {
        rest += bounds[order[j]];
        expansions += is_expansion(q, order[j]);
    }
    for (; essential < tokens; essential++) {
        Py_ssize_t others = tokens - essential;
        double coverage = (double)(others < 1 + expansions ? others : 1 + expansions);
        if (rest * (1.0 + q->boost * coverage) * (1.0 + 1e-9) < threshold) break;
        rest -= bounds[order[essential]];
        expansions -= is_expansion(q, order[essential]);
    }
    Py_ssize_t more = 0;
    for (Py_ssize_t j = first_essential; j < essential; j++) more += runs[order[j]];
    if (essential == tokens || more + filtered_cost(q, runs, more) > every) {
        unscore(q); /* pruning would not pay: score every posting, from scratch */
        outcome = 0;
        goto finish;
    }
    if (essential > first_essential) { /* the other essential tokens' holders, not scored yet */
        for (Py_ssize_t j = 0; j < first_round; j++) {
            Py_ssize_t slot = q->touched[j];
            q->cells[slot].flags = (uint8_t)((q->cells[slot].flags & ~CANDIDATE) | DONE);
        }
        for (Py_ssize_t j = first_essential; j < essential; j++)
            if (nominate_holders(q, order[j], 0) < 0) goto finish;
        if (score_tokens(q, 1, first_round) < 0) goto finish;
    }
    outcome = 1;
finish:
    PyMem_Free(order);
    return outcome;
}

/* Keeps `candidate` among the best `limit` of `heap` (the worst at its root); returns the new
 * count. */
static inline Py_ssize_t keep(Ranked *heap, Py_ssize_t count, Py_ssize_t limit,
                              const Ranked *candidate) {
    if (count < limit) {
        heap[count++] = *candidate;
        sift_up(heap, count - 1);
    } else if (before(candidate, &heap[0])) {
        heap[0] = *candidate;
        sift_down(heap, count, 0);
    }
    return count;
}

/* The best `limit` ranked slots into `heap` (the worst at its root); returns how many. Each
 * touched slot is read once more, here, and its columns zeroed on the way.
 *
 * Once the heap is full, most slots cannot beat its root: one comparison, which goes the same
 * way nearly every time, sets them aside before anything else is looked at (a mispredicted
 * branch a slot cost more than all the rest of the loop). It compares a slot's bound,
 * score * (1 + boost * name hits), which is at least its boosted score when the boost is not
 * negative (name_hits / size <= name_hits, and rounding keeps that order), with the root's
 * score, or with +inf/-inf when the slot's named-group rank is below/above the root's: the
 * rule of `before`, which decides every slot that passes. Local restrict pointers: see
 * scan_cached. */
static Py_ssize_t rank(Query *q, Ranked *restrict heap, Py_ssize_t limit, int filtered,
                       Py_ssize_t floor) {
    Cell *restrict cells = q->cells;
    const int32_t *restrict touched = q->touched;
    const int bounded = q->boost >= 0.0, named = q->named_count != 0;
    const double boost = q->boost;
    /* The least bound a slot of each named-group rank (0, 1) must have to be looked at, and
     * the least of them (a slot below it needs no group looked up). */
    double least[2] = {-INFINITY, -INFINITY}, lowest_bound = -INFINITY;
    Py_ssize_t count = 0, least_held = filtered ? floor : 0;
    for (Py_ssize_t j = 0; j < q->touched_count; j++) {
        Py_ssize_t slot = touched[j];
        uint32_t held = cells[slot].counts;
        double value = cells[slot].score;
        cells[slot].counts = 0;
        cells[slot].score = 0.0;
        uint8_t flag = cells[slot].flags;
        cells[slot].flags = flag & EXACT; /* clear() clears the exact slots */
        double bound = value * (1.0 + boost * (double)(held >> 16));
        if (bound < lowest_bound) continue;
        int first = named ? first_of(q, slot) : 0;
        if (bound < least[first]) continue;
        if (!limit || flag & EXACT || (Py_ssize_t)(held & 0xFFFF) < least_held) continue;
        if (count == limit) {
            if (first < heap[0].first) continue;
            if (bounded && first == heap[0].first && bound < heap[0].score) continue;
        }
        Ranked candidate = {first, boosted(q, slot, value, (int32_t)(held >> 16)), slot};
        count = keep(heap, count, limit, &candidate);
        if (bounded && count == limit) {
            least[0] = heap[0].first ? INFINITY : heap[0].score;
            least[1] = heap[0].first ? heap[0].score : -INFINITY;
            lowest_bound = named && least[1] < least[0] ? least[1] : least[0];
        }
    }
    return count;
}

/* A query's very common tokens set aside (MaxScore's non-essential terms): a token held by at
 * least ASIDE_SHARE of the slots (the `svc` every tool of the synthetic catalogs holds) is
 * scored only for the few documents that may rank, not for all of them. Under admission off
 * (`required` NULL) the documents are every holder of another token; under strict with no
 * coverage floor and lenient, the candidates (the holders of a required token, on the touched
 * list).
 *
 * The other tokens are scored into a partial score P and partial name hits h: as usual, a
 * token at a time into the slots' cells, or, with one required token held by few (at most
 * SIFT_SHARE of the slots, in a large index), by merging each token's run with the
 * required one's (sift_holders). A
 * document's exact score is at least boosted(P, h) (every token adds a score of zero or more,
 * and a name hit, to the coverage) and at most (P + A) (1 + boost (h + a) / size), A the sum
 * of the set-aside tokens' bounds and a their count; both are widened by 1e-9 for rounding,
 * since the exact score adds the same terms in another order. The k-th best lower bound is a
 * floor of the k-th best exact score; the documents whose upper bound reaches it are the
 * candidates, scored again from scratch with every token (as the pruned path scores its
 * candidates: the exact score) and ranked; no other can beat the k-th best of them. A
 * document holding set-aside tokens only scores at most A (1 + boost min(a, 1 +
 * e)), e the expansion tokens among them (see prune_off); the k-th best must be above that,
 * and at least `limit` documents must hold another token, or this gives up: the accumulators
 * clean again and, under strict and lenient, the candidates (re)nominated; the caller then
 * scores every posting (every candidate). Returns the number of hits in `heap`, 0 when it gave
 * up, -1 on bad data. */
#define ASIDE_SHARE 0.5
/* Holders summed by merging (sift_holders) only for a required token held by at most
 * SIFT_SHARE of the slots, and in an index of at least `sift_slots` slots (the caller's
 * SIFT_MIN_SLOTS; measured with benchmarks/kernel_ab.py, docs/performance.md). */
#define SIFT_SHARE 0.125

typedef struct {
    double bound;
    Py_ssize_t slot;
} Candidate;

/* Pushes `value` into the min-heap `least` of the `k` largest values seen (`*count` of them). */
static inline void keep_largest(double *least, Py_ssize_t *count, Py_ssize_t k, double value) {
    Py_ssize_t at;
    if (*count < k) {
        at = (*count)++;
        least[at] = value;
        while (at > 0 && least[(at - 1) / 2] > least[at]) {
            double swap = least[at];
            least[at] = least[(at - 1) / 2];
            least[(at - 1) / 2] = swap;
            at = (at - 1) / 2;
        }
        return;
    }
    if (!(value > least[0])) return;
    least[0] = value;
    for (at = 0;;) {
        Py_ssize_t low = at, left = 2 * at + 1, right = left + 1;
        if (left < *count && least[left] < least[low]) low = left;
        if (right < *count && least[right] < least[low]) low = right;
        if (low == at) return;
        double swap = least[at];
        least[at] = least[low];
        least[low] = swap;
        at = low;
    }
}

/* The exact slots nominated too. */
static int renominate_exact(Query *q, PyObject *exact) {
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(exact); j++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyList_GET_ITEM(exact, j));
        if (slot >= 0 && slot < q->total) nominate(q, slot);
    }
    return 0;
}

/* The candidates of strict and lenient again: the holders of a required token (the touched
 * list), each flagged a candidate, the exact slots among them. */
static int renominate(Query *q, const char *required, PyObject *exact) {
    if (touch_required(q, required) < 0) return -1;
    return renominate_exact(q, exact);
}

/* The bounds of rank_aside's documents, as they come: the k-th best lower bound so far, and the
 * documents whose upper bound reaches it. */
typedef struct {
    double *least; /* a min-heap of the `limit` best lower bounds */
    Py_ssize_t kept, limit;
    double threshold;
    Candidate *candidates;
    Py_ssize_t found, capacity;
    int overflow;
    double set_aside, boost;
    Py_ssize_t count_aside;
} Sieve;

/* Whether a document's upper bound with a name size of 1, which bounds it too, is below the
 * threshold: most documents are set aside by it, in one comparison, without a division (see
 * rank). Its arguments are the callers' locals (through the sieve, every cell written would
 * make the compiler read them again). */
static inline int below(double value, uint32_t hits, double set_aside, double boost,
                        Py_ssize_t count_aside, double threshold) {
    return (value + set_aside) * (1.0 + boost * (double)((hits >> 16) + count_aside)) *
               (1.0 + 1e-9) <
           threshold;
}

/* A document that holds another token than the set-aside ones, with its partial score `value`
 * and partial hits, not `below` the threshold: kept as a candidate unless its upper bound is
 * below it after all. */
static void sift_between(const Query *q, Sieve *v, Py_ssize_t slot, double low, double high,
                         uint32_t hits) {
    const double widen = 1.0 + 1e-9;
    int32_t name_hits = (int32_t)(hits >> 16);
    int32_t size =
        slot < q->slot_count ? q->name_sizes[slot] : q->extra_name_sizes[slot - q->slot_count];
    double upper =
        (high + v->set_aside) *
        (1.0 + v->boost * ((double)(name_hits + v->count_aside) / (double)size)) * widen;
    if (upper < v->threshold || v->overflow) return;
    keep_largest(v->least, &v->kept, v->limit, boosted(q, slot, low, name_hits) * (1.0 - 1e-9));
    if (v->kept == v->limit) v->threshold = v->least[0];
    if (v->found == v->capacity) {
        Candidate *grown =
            PyMem_Realloc(v->candidates, sizeof(Candidate) * (size_t)v->capacity * 2);
        if (grown == NULL) { /* no pruning: the same result, more work */
            v->overflow = 1;
            return;
        }
        v->candidates = grown;
        v->capacity *= 2;
    }
    v->candidates[v->found].bound = upper;
    v->candidates[v->found++].slot = slot;
}

/* sift_between for a partial score known exactly (as the exact score adds it, but for the
 * order of its terms). */
static inline void sift(const Query *q, Sieve *v, Py_ssize_t slot, double value, uint32_t hits) {
    sift_between(q, v, slot, value, value, hits);
}

/* The one required token of a query, when it has exactly one; else -1. */
static Py_ssize_t sole_required(const Query *q, const char *required) {
    Py_ssize_t sole = -1;
    for (Py_ssize_t t = 0; t < q->token_count; t++) {
        if (!required[t]) continue;
        if (sole >= 0) return -1;
        sole = t;
    }
    return sole >= 0 && q->token_start[sole + 1] - q->token_start[sole] == 1 ? sole : -1;
}

/* A run's postings added to the holders of r, the documents of r's run `slots[0, count)`:
 * `score[i]` and `held[i]` are the i-th holder's partial score and hits. The two runs are
 * merged, a posting a step, without a branch (which way a merge goes is a coin toss a posting:
 * a mispredicted branch costs more than the step), or, when looking the holders up costs less
 * (lookup_cost, the rule of score_tokens), the run is galloped through, a holder at a time. */
static void add_run(const int32_t *restrict slots, Py_ssize_t count, const Segment *home,
                    Py_ssize_t from, Py_ssize_t to, double weight, double *restrict score,
                    uint32_t *restrict held) {
    const int32_t *restrict other = home->slots;
    const double *restrict cache = home->cache;
    if (lookup_cost(to - from, count) < to - from) {
        for (Py_ssize_t i = 0; i < count && from < to; i++) {
            Py_ssize_t j = gallop(other, &from, to, slots[i]);
            if (j < 0) continue;
            double value = cache[j];
            score[i] += weight * fabs(value);
            held[i] += 1 + (value < 0.0 ? NAME_HIT : 0);
        }
        return;
    }
    Py_ssize_t i = 0, j = from;
    while (i < count && j < to) {
        int32_t mine = slots[i], theirs = other[j];
        double value = cache[j];
        uint32_t same = mine == theirs;
        /* x + 0.0 is x, and x * 1.0 is x: a holder the posting is not for is unchanged. */
        score[i] += weight * fabs(value) * (double)same;
        held[i] += same * (1 + (value < 0.0 ? NAME_HIT : 0));
        i += mine <= theirs;
        j += theirs <= mine;
    }
}

/* Under strict and lenient with one required token r: its holders' partial scores (every token
 * but the set-aside ones, in token order, as score_tokens adds them) into the sieve, each
 * holder's sums kept at its place in r's run (q->tmp, zeros outside a call, and the touched
 * list's room, empty on this path), each other token's run merged with r's (add_run). No
 * slot's columns are touched: scoring a token at a time writes each holder's cell, anywhere in
 * the slots, and at 330,000 tools that was most of a query's time. The caller checks that
 * every token not set aside has one part and every segment its saturations cached; a part's
 * postings are in the index's segments (each slot in one of them) or in `merged`, the
 * expansions' segment, which spans every slot. Returns the number of documents ranked (r's
 * live holders but the exact ones), or -1 on bad data. */
static Py_ssize_t sift_holders(Query *q, Py_ssize_t r, const uint8_t *aside,
                               const Segment *merged, Py_ssize_t exact_count, Sieve *v) {
    Py_ssize_t tokens = q->token_count, ranked = 0;
    double *score = q->tmp;
    uint32_t *held = (uint32_t *)q->touched;
    for (Py_ssize_t g = 0; g < q->segment_count; g++) {
        const Segment *s = &q->segments[g];
        if (s == merged) continue;
        Py_ssize_t start, end;
        int found = run_of(q, s, &q->parts[q->token_start[r]], &start, &end);
        if (found < 0) return -1;
        if (!found) continue;
        const int32_t *slots = s->slots + start;
        Py_ssize_t count = end - start;
        /* Strictly increasing slots of the segment: at most its size of them, so the sums fit
         * in the scratch's columns (a corrupt run could be longer). */
        for (Py_ssize_t i = 0; i < count; i++)
            if (!in_segment(s, slots[i]) || (i && slots[i] <= slots[i - 1])) return -1;
        memset(held, 0, sizeof(uint32_t) * (size_t)count);
        int bad = 0;
        for (Py_ssize_t t = 0; t < tokens && !bad; t++) {
            if (aside[t]) continue;
            const Part *p = &q->parts[q->token_start[t]];
            const Segment *home = p->term[2] >= 0 ? merged : s;
            Py_ssize_t from, to;
            found = home == NULL ? 0 : run_of(q, home, p, &from, &to);
            if (found < 0) bad = 1;
            if (found <= 0) continue;
            if (home != s) from = first_from(home->slots, from, to, s->first);
            add_run(slots, count, home, from, to, p->weight, score, held);
        }
        const double set_aside = v->set_aside, boost = v->boost;
        const Py_ssize_t count_aside = v->count_aside;
        double threshold = v->threshold;
        for (Py_ssize_t i = 0; i < count && !bad; i++) {
            Py_ssize_t slot = slots[i];
            if (s->dead && dead_at(q, s, slot)) continue;
            if (exact_count && q->cells[slot].flags & EXACT) continue;
            ranked++;
            if (below(score[i], held[i], set_aside, boost, count_aside, threshold)) continue;
            sift(q, v, slot, score[i], held[i]);
            threshold = v->threshold;
        }
        memset(score, 0, sizeof(double) * (size_t)count);
        if (bad) return -1;
    }
    return ranked;
}

/* Admission off with many holders: rank_aside's partial scores summed in a dense column a slot
 * rather than in each holder's 16-byte cell. When the postings of the tokens not set aside
 * reach `dense_share` of the slots (the caller's DENSE_SHARE), most slots hold one of them, and
 * at 330,000 tools the cells (5 MB, each posting a read-modify-write of one, each holder a place
 * on the touched list, read back at random in the bounds' pass) cost most of a query. Here each
 * posting adds its score to a float a slot and its name hit to a byte a slot (both in q->tmp,
 * zeros outside a call: 5 bytes a slot), and one pass over every slot, in order, feeds the
 * sieve, as bm25s adds into a dense float32 array and takes its top k. A float sum is not the
 * score: it only bounds it. A sum of n terms, each rounded to float, is within (2n + 2) 2^-24
 * of the exact sum (each rounding at most 2^-24, relative to a sum of non-negative terms; a
 * term is a weight times a saturation, far above the smallest normal float), so
 * the sieve takes the partial score to lie between the float sum shrunk and widened by that
 * (`slack`), and the candidates are scored again exactly. The caller checks that every token
 * not set aside has one part, every segment its saturations cached, and that there are fewer
 * than 256 such tokens (a byte of name hits). */
#define DENSE_BLOCK 16
static int add_dense(const Query *q, const Segment *s, double weight, Py_ssize_t start,
                     Py_ssize_t end, float *restrict score, uint8_t *restrict hits) {
    const int32_t *restrict slots = s->slots;
    const double *restrict cache = s->cache;
    const Py_ssize_t first = s->first, size = s->size;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_ssize_t slot = slots[i];
        if ((size_t)(slot - first) >= (size_t)size) return -1;
        if (s->dead && dead_at(q, s, slot)) continue;
        double value = cache[i];
        score[slot] += (float)(weight * fabs(value));
        hits[slot] += value < 0.0;
    }
    return 0;
}

/* Whether a full block of sums has one at the cut or above (a loop of constant length, which
 * the compiler turns into a few vector comparisons). */
static inline int block_reaches(const float *restrict score, float cut) {
    int reaches = 0;
    for (int k = 0; k < DENSE_BLOCK; k++) reaches |= score[k] >= cut;
    return reaches;
}

/* Returns -1 on bad data, else at least limit + exact_count when `limit` documents other than
 * the exact ones hold another token, else how many do (rank_aside gives up: the same outcome as
 * ranking fewer than `limit`, sooner); the columns are zeros again either way. */
static Py_ssize_t sift_dense(Query *q, const uint8_t *aside, Py_ssize_t exact_count, Sieve *v) {
    float *restrict score = (float *)q->tmp;
    uint8_t *restrict hits = (uint8_t *)(score + q->total); /* tmp holds 8 bytes a slot */
    const Py_ssize_t total = q->total;
    Py_ssize_t others = 0, expansions = 0;
    int bad = 0;
    for (Py_ssize_t t = 0; t < q->token_count && !bad; t++) {
        expansions += is_expansion(q, t);
        if (aside[t]) continue;
        others++;
        const Part *p = &q->parts[q->token_start[t]];
        for (Py_ssize_t g = 0; g < q->segment_count && !bad; g++) {
            const Segment *s = &q->segments[g];
            Py_ssize_t start, end;
            int found = run_of(q, s, p, &start, &end);
            if (found > 0) found = add_dense(q, s, p->weight, start, end, score, hits);
            bad = found < 0;
        }
    }
    const double set_aside = v->set_aside, boost = v->boost;
    const double slack = (double)(2 * others + 2) / 16777216.0;
    const Py_ssize_t count_aside = v->count_aside;
    /* A slot whose float sum is below `cut` has an upper bound below the threshold whatever its
     * name hits: its name coverage is at most one a token it holds, and at most 1 but for the
     * expansion tokens (see prune_off). One comparison a slot (a float, rounded down), in the
     * bounds' own margin, and 1e-12 more for the rounding of the cut itself. */
    Py_ssize_t held_most = others + count_aside;
    if (held_most > 1 + expansions) held_most = 1 + expansions;
    const double most = (1.0 + boost * (double)held_most) * (1.0 + 1e-9);
    double threshold = v->threshold;
    float cut = -INFINITY;
    /* A block of slots at a time, without a branch (whether a slot holds a token is a coin
     * toss a slot), and each slot of a block only when one of them reaches the cut. */
    for (Py_ssize_t base = 0; base < total && !bad; base += DENSE_BLOCK) {
        Py_ssize_t end = total - base < DENSE_BLOCK ? total : base + DENSE_BLOCK;
        int reaches = end - base < DENSE_BLOCK || block_reaches(score + base, cut);
        for (Py_ssize_t slot = base; reaches && slot < end; slot++) {
            float sum = score[slot];
            Py_ssize_t name_hits = hits[slot];
            if (sum < cut || (sum == 0.0f && !name_hits)) continue; /* no other token */
            double low = (double)sum * (1.0 - slack), high = (double)sum * (1.0 + slack);
            Py_ssize_t coverage = name_hits + count_aside; /* as `most`, with its own hits */
            if (coverage > 1 + expansions) coverage = 1 + expansions;
            if ((high + set_aside) * (1.0 + boost * (double)coverage) * (1.0 + 1e-9) < threshold)
                continue;
            if (exact_count && q->cells[slot].flags & EXACT) continue;
            sift_between(q, v, slot, low, high, (uint32_t)name_hits << 16);
            if (v->threshold != threshold) {
                threshold = v->threshold;
                double below = (threshold / most * (1.0 - 1e-12) - set_aside * (1.0 + 1e-12)) /
                               (1.0 + slack) * (1.0 - 1e-12);
                /* 1e-6 lower: rounded to a float (within 2^-24), still at most `below` */
                cut = (float)(below - fabs(below) * 1e-6);
            }
        }
        if (end - base == DENSE_BLOCK) { /* a constant size: a few vector stores */
            memset(score + base, 0, sizeof(float) * DENSE_BLOCK);
            memset(hits + base, 0, DENSE_BLOCK);
        } else {
            memset(score + base, 0, sizeof(float) * (size_t)(end - base));
            memset(hits + base, 0, (size_t)(end - base));
        }
    }
    if (bad) {
        memset(score, 0, sizeof(float) * (size_t)total);
        memset(hits, 0, (size_t)total);
        return -1;
    }
    return v->kept == v->limit ? v->limit + exact_count : v->kept;
}

/* `sole`: the one required token when the caller left the candidates unnominated for
 * sift_holders (-1: they are on the touched list); this nominates them again when it gives
 * up. */
static Py_ssize_t rank_aside(Query *q, const double *bounds, Ranked *heap, Py_ssize_t limit,
                             Py_ssize_t exact_count, const char *required, PyObject *exact,
                             Py_ssize_t sole) {
    Py_ssize_t tokens = q->token_count;
    const int filtered = required != NULL;
    int nominated = sole < 0; /* the candidates are on the touched list */
    Py_ssize_t outcome = 0;
    Sieve v = {NULL, 0, limit, -INFINITY, NULL, 0, 256, 0, 0.0, q->boost, 0};
    uint8_t *aside = NULL;
    if (bounds == NULL || tokens < 2 || limit <= 0 || q->named_count || q->boost < 0.0)
        goto finish;
    aside = PyMem_Calloc((size_t)tokens + 1, 1);
    v.least = PyMem_Malloc(sizeof(double) * (size_t)(limit + 1));
    v.candidates = PyMem_Malloc(sizeof(Candidate) * (size_t)v.capacity);
    if (aside == NULL || v.least == NULL || v.candidates == NULL)
        goto finish; /* no pruning */
    double best_other = 0.0;
    Py_ssize_t expansions = 0;
    for (Py_ssize_t t = 0; t < tokens; t++) {
        Py_ssize_t run = postings_of(q, t);
        if ((double)run >= ASIDE_SHARE * (double)q->total) {
            aside[t] = 1;
            v.set_aside += bounds[t];
            v.count_aside++;
            expansions += is_expansion(q, t);
        } else if (bounds[t] > best_other) {
            best_other = bounds[t];
        }
    }
    double coverage = (double)(v.count_aside < 1 + expansions ? v.count_aside : 1 + expansions);
    double aside_only = v.set_aside * (1.0 + q->boost * coverage) * (1.0 + 1e-9);
    /* Under off, the postings of the tokens not set aside, against dense_share of the slots
     * (sift_dense), with each such token of one part and fewer than 256 of them. */
    int dense = !filtered && tokens - v.count_aside < 256;
    for (Py_ssize_t g = 0; dense && g < q->segment_count; g++) dense &= q->segments[g].cache != NULL;
    Py_ssize_t others = 0;
    for (Py_ssize_t t = 0; dense && t < tokens; t++) {
        if (aside[t]) continue;
        dense &= q->token_start[t + 1] - q->token_start[t] == 1;
        others += postings_of(q, t);
    }
    dense &= (double)others >= q->dense_share * (double)q->total;
    /* With nothing set aside, the touched list's alternatives (prune_off, or every posting into
     * the cells) cost less while the cells fit in a core's second-level cache: the dense pass
     * from sift_slots on (measured, docs/performance.md). */
    dense &= v.count_aside || q->total >= q->sift_slots;
    /* Nothing to set aside (but for the dense pass, which sifts every holder all the same),
     * nothing else, or the set-aside tokens weigh as much as the best other one (the k-th best
     * would hardly be above what they score alone). */
    if ((!v.count_aside && !dense) || v.count_aside == tokens || !(aside_only < best_other))
        goto finish;

    Py_ssize_t ranked = 0;
    /* The expansions' segment, when a query has merged expansions: one, or none. */
    const Segment *merged = NULL;
    int merges = 0;
    for (Py_ssize_t g = 0; g < q->segment_count; g++) {
        if (q->segments[g].column == 2) {
            merged = &q->segments[g];
            merges++;
        }
    }
    /* Merging costs a step a holder of r for each other token: when r is held by many, or the
     * cells are few, scoring a token at a time costs less (its cells are then close together,
     * or all in the core's cache). */
    int siftable = sole >= 0 && merges <= 1 && q->total >= q->sift_slots &&
                   (double)postings_of(q, sole) <= SIFT_SHARE * (double)q->total;
    for (Py_ssize_t g = 0; g < q->segment_count; g++) siftable &= q->segments[g].cache != NULL;
    for (Py_ssize_t t = 0; t < tokens; t++)
        siftable &= aside[t] || q->token_start[t + 1] - q->token_start[t] == 1;
    if (siftable || dense) {
        ranked = siftable ? sift_holders(q, sole, aside, merged, exact_count, &v)
                          : sift_dense(q, aside, exact_count, &v);
        if (ranked < 0) {
            outcome = -1;
            goto finish;
        }
    } else {
        /* The one required token first of those scored: its holders are scored as they are
         * nominated (0.0 + x is x: the same sum), not read again. */
        int first = sole >= 0 && !nominated;
        for (Py_ssize_t t = 0; first && t < sole; t++) first = aside[t];
        if (!nominated) {
            int bad = first ? nominate_holders(q, sole, 1) : touch_required(q, required);
            if (bad < 0 || renominate_exact(q, exact) < 0) {
                outcome = -1;
                goto finish;
            }
            nominated = 1;
        }
        if (first) aside[sole] = 1;
        q->aside = aside;
        int scored = score_tokens(q, filtered, 0);
        q->aside = NULL;
        if (first) aside[sole] = 0;
        if (scored < 0) {
            outcome = -1; /* clear() zeroes what was touched */
            goto finish;
        }
        /* Every slot scored (holding another token; under strict and lenient, every
         * candidate): its bounds, its columns (and its candidate flag) cleared on the way. */
        Cell *restrict cells = q->cells;
        const double set_aside = v.set_aside, boost = v.boost;
        const Py_ssize_t count_aside = v.count_aside;
        double threshold = v.threshold;
        for (Py_ssize_t j = 0; j < q->touched_count; j++) {
            Py_ssize_t slot = q->touched[j];
            uint32_t hits = cells[slot].counts;
            double value = cells[slot].score;
            cells[slot].counts = 0;
            cells[slot].score = 0.0;
            if (filtered) cells[slot].flags &= (uint8_t)~CANDIDATE;
            ranked += hits != 0 && !(filtered && cells[slot].flags & EXACT);
            if (below(value, hits, set_aside, boost, count_aside, threshold)) continue;
            if (!hits || cells[slot].flags & EXACT) continue;
            sift(q, &v, slot, value, hits);
            threshold = v.threshold;
        }
        q->touched_count = 0; /* every slot on the list was zeroed */
        nominated = 0;
    }
    /* Too few documents hold another token (exact slots do not rank): those of set-aside
     * tokens only would rank. */
    if (v.overflow || ranked < limit + (filtered ? 0 : exact_count)) goto finish;
    /* The candidates that may reach the floor, scored exactly (every token, in order, as the
     * pruned path scores its candidates) and ranked. */
    for (Py_ssize_t j = 0; j < v.found; j++)
        if (v.candidates[j].bound >= v.threshold) nominate(q, v.candidates[j].slot);
    if (score_tokens(q, 1, 0) < 0) {
        outcome = -1;
        goto finish;
    }
    Py_ssize_t count = rank(q, heap, limit, 1, 0);
    q->touched_count = 0; /* rank cleared every one */
    if (count == limit && heap[0].score > aside_only) outcome = count;

finish:
    if (outcome == 0 && filtered && !nominated && renominate(q, required, exact) < 0)
        outcome = -1;
    PyMem_Free(aside);
    PyMem_Free(v.least);
    PyMem_Free(v.candidates);
    return outcome;
}

/* (slot, score, the tokens it holds): the held ones of `tokens`, in their order. */
static PyObject *matched_tokens(const Query *q, PyObject *tokens, const char *held) {
    Py_ssize_t count = 0;
    for (Py_ssize_t t = 0; t < q->token_count; t++) count += held[t];
    PyObject *matched = PyTuple_New(count);
    if (matched == NULL) return NULL;
    for (Py_ssize_t t = 0, j = 0; t < q->token_count; t++) {
        if (!held[t]) continue;
        PyObject *token = PyList_GET_ITEM(tokens, t);
        Py_INCREF(token);
        PyTuple_SET_ITEM(matched, j++, token);
    }
    return matched;
}

/* The field names of a hit (interned once). */
static PyObject *NAME_KEY, *SCORE_KEY, *MATCHED_KEY, *NAME_ATTRIBUTE;

/* A hit object of the plain class `kind` (index.plain_hits checked it is one: its instances
 * keep their three fields in their __dict__, which its __init__ would fill), named after the
 * document of `slot` (its `name`). */
static PyObject *make_hit(PyObject *kind, PyObject *documents, PyObject *extra,
                          Py_ssize_t slot_count, Py_ssize_t slot, double score,
                          PyObject *matched) {
    PyObject *document = slot < slot_count ? PyList_GET_ITEM(documents, slot)
                                           : PyList_GET_ITEM(extra, slot - slot_count);
    PyObject *name = PyObject_GetAttr(document, NAME_ATTRIBUTE);
    PyObject *value = PyFloat_FromDouble(score);
    PyObject *made = NULL, *fields = NULL;
    if (name == NULL || value == NULL) goto finish;
    made = ((PyTypeObject *)kind)->tp_alloc((PyTypeObject *)kind, 0);
    if (made == NULL) goto finish;
    fields = PyObject_GenericGetDict(made, NULL);
    if (fields == NULL || PyDict_SetItem(fields, NAME_KEY, name) < 0 ||
        PyDict_SetItem(fields, SCORE_KEY, value) < 0 ||
        PyDict_SetItem(fields, MATCHED_KEY, matched) < 0)
        Py_CLEAR(made);
finish:
    Py_XDECREF(fields);
    Py_XDECREF(name);
    Py_XDECREF(value);
    return made;
}

/* (slot, score, the tokens it holds), or with `hits` the hit object itself (see make_hit). */
static PyObject *hit(const Query *q, PyObject *tokens, Py_ssize_t slot, double score,
                     const char *held, PyObject *hits) {
    PyObject *matched = matched_tokens(q, tokens, held);
    if (matched == NULL) return NULL;
    if (hits != NULL) {
        PyObject *made = make_hit(PyTuple_GET_ITEM(hits, 0), PyTuple_GET_ITEM(hits, 1),
                                  PyTuple_GET_ITEM(hits, 2), q->slot_count, slot, score,
                                  matched);
        Py_DECREF(matched);
        return made;
    }
    return Py_BuildValue("(ndN)", slot, score, matched);
}

static int as_index(PyObject *object, Py_ssize_t *value) {
    *value = PyLong_AsSsize_t(object);
    return *value == -1 && PyErr_Occurred() ? -1 : 0;
}

static int parse_segments(Query *q, Views *views, PyObject *list) {
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "bm25 kernel: segments must be a list");
        return -1;
    }
    q->segment_count = PyList_GET_SIZE(list);
    q->segments = PyMem_Calloc((size_t)q->segment_count + 1, sizeof(Segment));
    if (q->segments == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t g = 0; g < q->segment_count; g++) {
        PyObject *item = PyList_GET_ITEM(list, g);
        Segment *s = &q->segments[g];
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 9) {
            PyErr_SetString(PyExc_TypeError, "bm25 kernel: a segment is a 9-tuple");
            return -1;
        }
        Py_ssize_t dead, column, offset_count, count_count, cached = 0, stamped = 0;
        if (as_index(PyTuple_GET_ITEM(item, 0), &s->first) < 0 ||
            as_index(PyTuple_GET_ITEM(item, 1), &s->size) < 0 ||
            as_index(PyTuple_GET_ITEM(item, 5), &dead) < 0 ||
            as_index(PyTuple_GET_ITEM(item, 6), &column) < 0)
            return -1;
        s->dead = dead != 0;
        s->column = (int)column;
        s->offsets = buffer_of(views, PyTuple_GET_ITEM(item, 2), 8, 0, &offset_count, "offsets");
        if (s->offsets == NULL) return -1;
        s->slots = buffer_of(views, PyTuple_GET_ITEM(item, 3), 4, 0, &s->postings, "slots");
        if (s->slots == NULL) return -1;
        /* Without counts, the cache holds the saturations already (no stamps). */
        int precomputed = PyTuple_GET_ITEM(item, 4) == Py_None;
        if (!precomputed) {
            s->counts = buffer_of(views, PyTuple_GET_ITEM(item, 4), 2, 0, &count_count, "counts");
            if (s->counts == NULL) return -1;
        }
        s->terms = offset_count - 1;
        if (PyTuple_GET_ITEM(item, 7) != Py_None) {
            s->cache = (double *)buffer_of(views, PyTuple_GET_ITEM(item, 7), 8, !precomputed,
                                           &cached, "cache");
            if (s->cache == NULL) return -1;
        }
        if (PyTuple_GET_ITEM(item, 8) != Py_None) {
            s->stamps = (uint32_t *)buffer_of(views, PyTuple_GET_ITEM(item, 8), 4, 1, &stamped,
                                              "stamps");
            if (s->stamps == NULL) return -1;
        }
        if (precomputed) count_count = FIELDS * s->postings;
        if (offset_count < 1 || count_count != FIELDS * s->postings || s->first < 0 ||
            s->size < 0 || s->first + s->size > q->total || column < 0 || column > 2 ||
            (s->cache != NULL && cached != s->postings) ||
            (s->stamps != NULL && (s->cache == NULL || stamped < s->terms)) ||
            (precomputed && (s->cache == NULL || s->stamps != NULL)) ||
            (!precomputed && s->cache != NULL && s->stamps == NULL)) {
            corrupt("a segment's arrays do not fit together");
            return -1;
        }
    }
    return 0;
}

static int parse_parts(Query *q, PyObject *list) {
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "bm25 kernel: parts must be a list");
        return -1;
    }
    q->part_count = PyList_GET_SIZE(list);
    q->parts = PyMem_Calloc((size_t)q->part_count + 1, sizeof(Part));
    q->token_start = PyMem_Calloc((size_t)q->token_count + 1, sizeof(Py_ssize_t));
    if (q->parts == NULL || q->token_start == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t previous = 0;
    for (Py_ssize_t k = 0; k < q->part_count; k++) {
        Part *p = &q->parts[k];
        PyObject *item = PyList_GET_ITEM(list, k);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 5) {
            PyErr_SetString(PyExc_TypeError, "bm25 kernel: a part is a 5-tuple");
            return -1;
        }
        if (as_index(PyTuple_GET_ITEM(item, 0), &p->token) < 0) return -1;
        p->weight = PyFloat_AsDouble(PyTuple_GET_ITEM(item, 1));
        if (p->weight == -1.0 && PyErr_Occurred()) return -1;
        if (as_index(PyTuple_GET_ITEM(item, 2), &p->term[0]) < 0 ||
            as_index(PyTuple_GET_ITEM(item, 3), &p->term[1]) < 0 ||
            as_index(PyTuple_GET_ITEM(item, 4), &p->term[2]) < 0)
            return -1;
        if (p->token < previous || p->token >= q->token_count) {
            corrupt("parts must come in token order");
            return -1;
        }
        previous = p->token;
    }
    /* token_start[t]: the first part of token t (parts are in token order). */
    Py_ssize_t k = 0;
    for (Py_ssize_t t = 0; t <= q->token_count; t++) {
        while (k < q->part_count && q->parts[k].token < t) k++;
        q->token_start[t] = k;
    }
    return 0;
}

static int parse_params(Query *q, PyObject *params) {
    double *targets[13] = {&q->k1, &q->one_minus_b, &q->boost};
    for (int f = 0; f < FIELDS; f++) {
        targets[3 + f] = &q->factors[f];
        targets[8 + f] = &q->weights[f];
    }
    if (!PyTuple_Check(params) || PyTuple_GET_SIZE(params) != 13) {
        PyErr_SetString(PyExc_TypeError, "bm25 kernel: params is a 13-tuple of floats");
        return -1;
    }
    for (int i = 0; i < 13; i++) {
        *targets[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(params, i));
        if (*targets[i] == -1.0 && PyErr_Occurred()) return -1;
    }
    return 0;
}

static PyObject *kernel_search(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 24) {
        PyErr_SetString(PyExc_TypeError, "search() takes 24 arguments");
        return NULL;
    }
    Query q;
    memset(&q, 0, sizeof(q));
    Views views;
    views.count = 0;
    PyObject *result = NULL;
    Ranked *heap = NULL;
    char *held = NULL;
    int64_t *named = NULL;
    double *bounds = NULL;
    PyObject *exact = NULL;
    int dirty = 0;
    Py_ssize_t count, extra_count, n;

    q.slot_count = PyLong_AsSsize_t(args[1]);
    if (q.slot_count < 0) goto done;
    q.lengths = buffer_of(&views, args[2], 4, 0, &count, "lengths");
    if (q.lengths == NULL) goto done;
    if (count < FIELDS * q.slot_count) {
        corrupt("lengths are too short");
        goto done;
    }
    q.alive = buffer_of(&views, args[3], 1, 0, &count, "alive");
    if (q.alive == NULL) goto done;
    if (count < q.slot_count) {
        corrupt("alive is too short");
        goto done;
    }
    q.name_sizes = buffer_of(&views, args[4], 4, 0, &count, "name_sizes");
    if (q.name_sizes == NULL) goto done;
    q.groups = buffer_of(&views, args[5], 4, 0, &n, "groups");
    if (q.groups == NULL) goto done;
    if (count < q.slot_count || n < q.slot_count) {
        corrupt("name sizes or groups are too short");
        goto done;
    }
    q.extra_lengths = buffer_of(&views, args[6], 4, 0, &extra_count, "extra_lengths");
    if (q.extra_lengths == NULL) goto done;
    extra_count /= FIELDS;
    q.extra_name_sizes = buffer_of(&views, args[7], 4, 0, &count, "extra_name_sizes");
    if (q.extra_name_sizes == NULL) goto done;
    q.extra_groups = buffer_of(&views, args[8], 4, 0, &n, "extra_groups");
    if (q.extra_groups == NULL) goto done;
    if (count < extra_count || n < extra_count) {
        corrupt("extra name sizes or groups are too short");
        goto done;
    }
    q.total = q.slot_count + extra_count;

    Py_ssize_t scratch_bytes;
    char *scratch = (char *)buffer_of(&views, args[9], 1, 1, &scratch_bytes, "scratch");
    if (scratch == NULL) goto done;
    if (scratch_bytes < SCRATCH_HEADER + SCRATCH_SLOT * q.total) {
        corrupt("scratch is too small");
        goto done;
    }
    /* Laid out by the buffer's capacity, not by this query's slot count: the columns that
     * stay zero between calls keep their place whatever the next query's extra candidates. */
    Py_ssize_t capacity = (scratch_bytes - SCRATCH_HEADER) / SCRATCH_SLOT;
    q.cells = (Cell *)scratch; /* a bytearray's buffer is aligned for doubles */
    q.tmp = (double *)(q.cells + capacity);
    q.touched = (int32_t *)(q.tmp + capacity);
    q.token_touched = q.touched + capacity + SPARE / (Py_ssize_t)sizeof(int32_t);
    dirty = 1;

    if (parse_params(&q, args[10]) < 0) goto done;
    memset(q.coverage, 0, sizeof(q.coverage));
    Py_ssize_t version;
    if (as_index(args[18], &version) < 0) goto done;
    q.version = (uint32_t)version;
    PyObject *tokens = args[12];
    if (!PyList_Check(tokens)) {
        PyErr_SetString(PyExc_TypeError, "bm25 kernel: tokens must be a list");
        goto done;
    }
    q.token_count = PyList_GET_SIZE(tokens);
    if (q.token_count > MAX_TOKENS) {
        PyErr_SetString(PyExc_ValueError, "bm25 kernel: more than 65535 distinct tokens");
        goto done;
    }
    if (parse_segments(&q, &views, args[0]) < 0) goto done;
    if (parse_parts(&q, args[11]) < 0) goto done;

    const char *required = NULL;
    if (args[13] != Py_None) {
        if (!PyBytes_Check(args[13]) || PyBytes_GET_SIZE(args[13]) != q.token_count) {
            PyErr_SetString(PyExc_TypeError, "bm25 kernel: required must be a byte a token");
            goto done;
        }
        required = PyBytes_AS_STRING(args[13]);
    }
    Py_ssize_t floor = PyLong_AsSsize_t(args[14]);
    if (floor == -1 && PyErr_Occurred()) goto done;
    exact = args[15];
    if (!PyList_Check(exact)) {
        PyErr_SetString(PyExc_TypeError, "bm25 kernel: exact must be a list");
        exact = NULL;
        goto done;
    }
    if (!PyList_Check(args[16])) {
        PyErr_SetString(PyExc_TypeError, "bm25 kernel: named must be a list");
        goto done;
    }
    q.named_count = PyList_GET_SIZE(args[16]);
    named = PyMem_Calloc((size_t)q.named_count + 1, sizeof(int64_t));
    if (named == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < q.named_count; j++) {
        named[j] = PyLong_AsLongLong(PyList_GET_ITEM(args[16], j));
        if (named[j] == -1 && PyErr_Occurred()) goto done;
    }
    q.named = named;
    Py_ssize_t limit = PyLong_AsSsize_t(args[17]);
    if (limit == -1 && PyErr_Occurred()) goto done;
    Py_ssize_t exact_count = PyList_GET_SIZE(exact);
    if (args[19] != Py_None) {
        if (!PyList_Check(args[19]) || PyList_GET_SIZE(args[19]) != q.token_count) {
            PyErr_SetString(PyExc_TypeError, "bm25 kernel: bounds must be a float a token");
            goto done;
        }
        bounds = PyMem_Malloc(sizeof(double) * (size_t)(q.token_count + 1));
        if (bounds == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t t = 0; t < q.token_count; t++) {
            bounds[t] = PyFloat_AsDouble(PyList_GET_ITEM(args[19], t));
            if (bounds[t] == -1.0 && PyErr_Occurred()) goto done;
        }
    }

    double prune_share = PyFloat_AsDouble(args[20]);
    if (prune_share == -1.0 && PyErr_Occurred()) goto done;
    if (as_index(args[22], &q.sift_slots) < 0) goto done;
    q.dense_share = PyFloat_AsDouble(args[23]);
    if (q.dense_share == -1.0 && PyErr_Occurred()) goto done;
    PyObject *hits_of = args[21] == Py_None ? NULL : args[21];
    if (hits_of != NULL &&
        (!PyTuple_Check(hits_of) || PyTuple_GET_SIZE(hits_of) != 3 ||
         !PyType_Check(PyTuple_GET_ITEM(hits_of, 0)) ||
         !PyList_Check(PyTuple_GET_ITEM(hits_of, 1)) ||
         !PyList_Check(PyTuple_GET_ITEM(hits_of, 2)) ||
         PyList_GET_SIZE(PyTuple_GET_ITEM(hits_of, 1)) < q.slot_count ||
         PyList_GET_SIZE(PyTuple_GET_ITEM(hits_of, 2)) < q.total - q.slot_count)) {
        PyErr_SetString(PyExc_TypeError,
                        "bm25 kernel: hits is (a hit class, documents, extra documents)");
        goto done;
    }

    /* With one plain required token and no coverage floor, rank_aside may rank its holders
     * document at a time (sift_holders): they are nominated only if it cannot. */
    Py_ssize_t sole = required != NULL && floor == 0 && bounds != NULL
                          ? sole_required(&q, required)
                          : -1;
    if (required != NULL && sole < 0) {
        if (touch_required(&q, required) < 0) {
            corrupt("postings out of range");
            goto done;
        }
    }
    for (Py_ssize_t j = 0; j < exact_count; j++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyList_GET_ITEM(exact, j));
        if (slot < 0 || slot >= q.total) {
            if (!PyErr_Occurred()) corrupt("an exact slot is out of range");
            goto done;
        }
        if (required != NULL && sole < 0) nominate(&q, slot);
        q.cells[slot].flags |= EXACT;
    }
    Py_ssize_t ranked_limit = limit - exact_count;
    if (ranked_limit < 0) ranked_limit = 0;
    heap = PyMem_Malloc(sizeof(Ranked) * (size_t)(ranked_limit + 1));
    held = PyMem_Malloc((size_t)q.token_count + 1);
    if (heap == NULL || held == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* Admission off: its common tokens set aside, or pruned (a first round), else every
     * posting scored. Set aside first: where both apply, a first round that cannot prune
     * enough costs a third of the query before it gives up (admission off at 330,000 tools:
     * p99 of the CPU time 2.3 ms with the first round first, 1.0 ms this way). */
    int pruned = 0;
    Py_ssize_t heap_count = 0;
    if (required == NULL) {
        heap_count = rank_aside(&q, bounds, heap, ranked_limit, exact_count, NULL, exact, -1);
        if (!heap_count) pruned = prune_off(&q, bounds, ranked_limit, prune_share);
        if (pruned < 0 || heap_count < 0) {
            corrupt("postings out of range");
            goto done;
        }
    } else if (floor == 0) {
        heap_count =
            rank_aside(&q, bounds, heap, ranked_limit, exact_count, required, exact, sole);
        if (heap_count < 0) {
            corrupt("postings out of range");
            goto done;
        }
    }
    if (!pruned && !heap_count && score_tokens(&q, required != NULL, 0) < 0) {
        corrupt("postings out of range");
        goto done;
    }
    if (!heap_count) heap_count = rank(&q, heap, ranked_limit, required != NULL, floor);
    q.touched_count = 0;
    qsort(heap, (size_t)heap_count, sizeof(Ranked), compare_ranked);

    Py_ssize_t shown = exact_count < limit ? exact_count : limit;
    if (shown < 0) shown = 0;
    result = PyList_New(shown + heap_count);
    if (result == NULL) goto done;
    for (Py_ssize_t j = 0; j < shown + heap_count; j++) {
        Py_ssize_t slot =
            j < shown ? PyLong_AsSsize_t(PyList_GET_ITEM(exact, j)) : heap[j - shown].slot;
        double score;
        int32_t name_hits;
        score_one(&q, slot, held, &score, &name_hits);
        PyObject *item =
            hit(&q, tokens, slot, boosted(&q, slot, score, name_hits), held, hits_of);
        if (item == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, j, item);
    }

done:
    if (dirty) clear(&q, exact);
    PyMem_Free(heap);
    PyMem_Free(held);
    PyMem_Free(named);
    PyMem_Free(bounds);
    PyMem_Free(q.segments);
    PyMem_Free(q.parts);
    PyMem_Free(q.token_start);
    release_views(&views);
    return result;
}

/* postings(terms, docs, documents, vocabulary_size) -> (offsets, slots, counts)
 *
 * Term-major postings from each field's tokens: terms[f] and docs[f] (int32) are field f's
 * tokens, their documents in order. For each term, the documents holding it (sorted) and, per
 * posting, the term's frequency in each field (uint16, at most 65535). Two passes over the
 * tokens, document by document: count each term's documents, then place each posting; the
 * result is build.py's sort of the same tokens (its reference, checked equal by
 * tests/search/test_build.py). */
static PyObject *kernel_postings(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4 || !PyList_Check(args[0]) || !PyList_Check(args[1]) ||
        PyList_GET_SIZE(args[0]) != FIELDS || PyList_GET_SIZE(args[1]) != FIELDS) {
        PyErr_SetString(PyExc_TypeError, "postings(terms, docs, documents, vocabulary_size)");
        return NULL;
    }
    Views views;
    views.count = 0;
    const int32_t *terms[FIELDS], *docs[FIELDS];
    Py_ssize_t lengths[FIELDS], cursor[FIELDS] = {0};
    PyObject *result = NULL, *offsets_bytes = NULL, *slots_bytes = NULL, *counts_bytes = NULL;
    int32_t *mark = NULL;
    int64_t *next = NULL;
    Py_ssize_t documents, vocabulary;
    if (as_index(args[2], &documents) < 0 || as_index(args[3], &vocabulary) < 0) return NULL;
    if (documents < 0 || vocabulary < 0 || documents > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "postings: sizes out of range");
        return NULL;
    }
    for (int f = 0; f < FIELDS; f++) {
        Py_ssize_t count;
        terms[f] = buffer_of(&views, PyList_GET_ITEM(args[0], f), 4, 0, &lengths[f], "terms");
        if (terms[f] == NULL) goto done;
        docs[f] = buffer_of(&views, PyList_GET_ITEM(args[1], f), 4, 0, &count, "docs");
        if (docs[f] == NULL) goto done;
        if (count != lengths[f]) {
            corrupt("a field's terms and documents differ in length");
            goto done;
        }
        for (Py_ssize_t i = 0; i < count; i++) {
            if (terms[f][i] < 0 || terms[f][i] >= vocabulary || docs[f][i] < 0 ||
                docs[f][i] >= documents || (i && docs[f][i] < docs[f][i - 1])) {
                corrupt("a token's term or document is out of range or order");
                goto done;
            }
        }
    }
    mark = PyMem_Malloc(sizeof(int32_t) * (size_t)(vocabulary + 1));
    next = PyMem_Calloc((size_t)vocabulary + 1, sizeof(int64_t));
    offsets_bytes = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * (vocabulary + 1));
    if (mark == NULL || next == NULL || offsets_bytes == NULL) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    int64_t *offsets = (int64_t *)PyByteArray_AS_STRING(offsets_bytes);
    /* Pass 1: how many documents hold each term. */
    for (Py_ssize_t t = 0; t < vocabulary; t++) mark[t] = -1;
    for (Py_ssize_t d = 0; d < documents; d++) {
        for (int f = 0; f < FIELDS; f++) {
            for (Py_ssize_t i = cursor[f]; i < lengths[f] && docs[f][i] == d; i++) {
                int32_t term = terms[f][i];
                if (mark[term] != (int32_t)d) {
                    mark[term] = (int32_t)d;
                    next[term] += 1;
                }
            }
        }
        for (int f = 0; f < FIELDS; f++)
            while (cursor[f] < lengths[f] && docs[f][cursor[f]] == d) cursor[f]++;
    }
    int64_t total = 0;
    for (Py_ssize_t t = 0; t < vocabulary; t++) {
        offsets[t] = total;
        total += next[t];
        next[t] = offsets[t];
    }
    offsets[vocabulary] = total;
    slots_bytes = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int32_t) * total);
    counts_bytes = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)sizeof(uint16_t) * FIELDS * total);
    if (slots_bytes == NULL || counts_bytes == NULL) goto done;
    int32_t *slots = (int32_t *)PyByteArray_AS_STRING(slots_bytes);
    uint16_t *counts = (uint16_t *)PyByteArray_AS_STRING(counts_bytes);
    memset(counts, 0, sizeof(uint16_t) * FIELDS * (size_t)total);
    /* Pass 2: place each posting; documents come in order, so each term's stay sorted. mark
     * now holds the position of the term's posting for the current document. */
    for (Py_ssize_t t = 0; t < vocabulary; t++) mark[t] = -1;
    int64_t *at = next; /* the next free place of each term */
    int32_t *owner = PyMem_Malloc(sizeof(int32_t) * (size_t)(vocabulary + 1));
    if (owner == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t t = 0; t < vocabulary; t++) owner[t] = -1;
    for (int f = 0; f < FIELDS; f++) cursor[f] = 0;
    for (Py_ssize_t d = 0; d < documents; d++) {
        for (int f = 0; f < FIELDS; f++) {
            for (; cursor[f] < lengths[f] && docs[f][cursor[f]] == d; cursor[f]++) {
                int32_t term = terms[f][cursor[f]];
                int64_t place;
                if (owner[term] != (int32_t)d) {
                    owner[term] = (int32_t)d;
                    place = at[term]++;
                    slots[place] = (int32_t)d;
                    mark[term] = (int32_t)(place - offsets[term]);
                } else {
                    place = offsets[term] + mark[term];
                }
                uint16_t *count = &counts[FIELDS * place + f];
                if (*count < UINT16_MAX) *count += 1;
            }
        }
    }
    PyMem_Free(owner);
    result = PyTuple_Pack(3, offsets_bytes, slots_bytes, counts_bytes);

done:
    Py_XDECREF(offsets_bytes);
    Py_XDECREF(slots_bytes);
    Py_XDECREF(counts_bytes);
    PyMem_Free(mark);
    PyMem_Free(next);
    release_views(&views);
    return result;
}

/* The word table of the build: each distinct raw word of the indexed text, numbered in order
 * of first sight. word_ids(table, text) numbers the words of `text` (bytes whose words are
 * separated by spaces: tokenize.raw_text's form) without making a Python object a word, which
 * is most of what indexing a large catalog costs in Python; only the words seen for the first
 * time come back as bytes, to be split and stemmed once. */
typedef struct {
    int32_t *slots;   /* open addressing, linear probing: a word id, or -1 */
    uint64_t *hashes; /* each word's hash, by id */
    int64_t *starts;  /* each word's first byte in text, by id; one more: the end */
    char *text;       /* every word's bytes, end to end */
    Py_ssize_t capacity, count, count_room, text_size, text_room;
} WordTable;

#define WORD_TABLE "hermes bm25 word table"

static void free_word_table(WordTable *table) {
    PyMem_Free(table->slots);
    PyMem_Free(table->hashes);
    PyMem_Free(table->starts);
    PyMem_Free(table->text);
    PyMem_Free(table);
}

static void word_table_free(PyObject *capsule) {
    WordTable *table = PyCapsule_GetPointer(capsule, WORD_TABLE);
    if (table != NULL) free_word_table(table);
}

static PyObject *kernel_word_table(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    (void)args;
    if (nargs != 0) {
        PyErr_SetString(PyExc_TypeError, "word_table()");
        return NULL;
    }
    WordTable *table = PyMem_Calloc(1, sizeof(WordTable));
    if (table == NULL) return PyErr_NoMemory();
    table->capacity = 1024;
    table->count_room = 512;
    table->text_room = 4096;
    table->slots = PyMem_Malloc(sizeof(int32_t) * (size_t)table->capacity);
    table->hashes = PyMem_Malloc(sizeof(uint64_t) * (size_t)table->count_room);
    table->starts = PyMem_Malloc(sizeof(int64_t) * (size_t)(table->count_room + 1));
    table->text = PyMem_Malloc((size_t)table->text_room);
    if (table->slots == NULL || table->hashes == NULL || table->starts == NULL ||
        table->text == NULL) {
        free_word_table(table);
        return PyErr_NoMemory();
    }
    memset(table->slots, 0xff, sizeof(int32_t) * (size_t)table->capacity);
    table->starts[0] = 0;
    PyObject *capsule = PyCapsule_New(table, WORD_TABLE, word_table_free);
    if (capsule == NULL) free_word_table(table);
    return capsule;
}

static inline uint64_t word_hash(const unsigned char *word, Py_ssize_t size) {
    uint64_t hash = 14695981039346656037ULL; /* FNV-1a */
    for (Py_ssize_t i = 0; i < size; i++) hash = (hash ^ word[i]) * 1099511628211ULL;
    return hash ^ (hash >> 29);
}

static int word_table_grow(WordTable *table) {
    Py_ssize_t capacity = table->capacity * 2;
    int32_t *slots = PyMem_Malloc(sizeof(int32_t) * (size_t)capacity);
    if (slots == NULL) return -1;
    memset(slots, 0xff, sizeof(int32_t) * (size_t)capacity);
    uint64_t mask = (uint64_t)capacity - 1;
    for (Py_ssize_t id = 0; id < table->count; id++) {
        uint64_t at = table->hashes[id] & mask;
        while (slots[at] >= 0) at = (at + 1) & mask;
        slots[at] = (int32_t)id;
    }
    PyMem_Free(table->slots);
    table->slots = slots;
    table->capacity = capacity;
    return 0;
}

/* The id of `word`, a new one when the table has not seen it; -1 when memory runs out. The
 * table grows before it could be more than half full, so a probe always ends at a free slot
 * (a failed growth leaves it as it was). */
static Py_ssize_t word_id(WordTable *table, const unsigned char *word, Py_ssize_t size) {
    if (2 * (table->count + 1) > table->capacity && word_table_grow(table) < 0) return -1;
    uint64_t hash = word_hash(word, size), mask = (uint64_t)table->capacity - 1;
    uint64_t at = hash & mask;
    for (int32_t id; (id = table->slots[at]) >= 0; at = (at + 1) & mask) {
        if (table->hashes[id] == hash && table->starts[id + 1] - table->starts[id] == size &&
            memcmp(table->text + table->starts[id], word, (size_t)size) == 0)
            return id;
    }
    if (table->count >= INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "bm25 kernel: too many distinct words");
        return -1;
    }
    if (table->count == table->count_room) {
        Py_ssize_t room = table->count_room * 2;
        uint64_t *hashes = PyMem_Realloc(table->hashes, sizeof(uint64_t) * (size_t)room);
        if (hashes == NULL) return -1;
        table->hashes = hashes;
        int64_t *starts = PyMem_Realloc(table->starts, sizeof(int64_t) * (size_t)(room + 1));
        if (starts == NULL) return -1;
        table->starts = starts;
        table->count_room = room;
    }
    if (table->text_size + size > table->text_room) {
        Py_ssize_t room = table->text_room * 2;
        while (room < table->text_size + size) room *= 2;
        char *text = PyMem_Realloc(table->text, (size_t)room);
        if (text == NULL) return -1;
        table->text = text;
        table->text_room = room;
    }
    Py_ssize_t id = table->count++;
    memcpy(table->text + table->text_size, word, (size_t)size);
    table->text_size += size;
    table->hashes[id] = hash;
    table->starts[id + 1] = table->text_size;
    table->slots[at] = (int32_t)id;
    return id;
}

static PyObject *kernel_word_ids(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "word_ids(table, text)");
        return NULL;
    }
    WordTable *table = PyCapsule_GetPointer(args[0], WORD_TABLE);
    if (table == NULL) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *text = view.buf;
    Py_ssize_t size = view.len, known = table->count, found = 0;
    PyObject *ids_bytes = PyByteArray_FromStringAndSize(
        NULL, (Py_ssize_t)sizeof(int32_t) * (size / 2 + 1)); /* a word and a space at least */
    PyObject *new_words = NULL, *result = NULL;
    if (ids_bytes == NULL) goto done;
    int32_t *ids = (int32_t *)PyByteArray_AS_STRING(ids_bytes);
    for (Py_ssize_t i = 0; i < size;) {
        if (text[i] == ' ') {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < size && text[i] != ' ') i++;
        Py_ssize_t id = word_id(table, text + start, i - start);
        if (id < 0) {
            if (!PyErr_Occurred()) PyErr_NoMemory();
            goto done;
        }
        ids[found++] = (int32_t)id;
    }
    if (PyByteArray_Resize(ids_bytes, (Py_ssize_t)sizeof(int32_t) * found) < 0) goto done;
    new_words = PyList_New(table->count - known);
    if (new_words == NULL) goto done;
    for (Py_ssize_t id = known; id < table->count; id++) {
        PyObject *word = PyBytes_FromStringAndSize(
            table->text + table->starts[id], (Py_ssize_t)(table->starts[id + 1] - table->starts[id]));
        if (word == NULL) goto done;
        PyList_SET_ITEM(new_words, id - known, word);
    }
    result = PyTuple_Pack(2, ids_bytes, new_words);

done:
    Py_XDECREF(ids_bytes);
    Py_XDECREF(new_words);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef kernel_methods[] = {
    {"search", (PyCFunction)(void (*)(void))kernel_search, METH_FASTCALL,
     "Rank a query over the postings (see kernel_numpy.search)."},
    {"postings", (PyCFunction)(void (*)(void))kernel_postings, METH_FASTCALL,
     "Term-major postings of each field's tokens (see build.py)."},
    {"word_table", (PyCFunction)(void (*)(void))kernel_word_table, METH_FASTCALL,
     "An empty word table (see build.PyWordTable)."},
    {"word_ids", (PyCFunction)(void (*)(void))kernel_word_ids, METH_FASTCALL,
     "The ids of the words of a text, and the words seen for the first time."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef kernel_module = {
    PyModuleDef_HEAD_INIT, "_kernel", "The bm25 engine's query loop in C.", -1, kernel_methods,
    NULL, NULL, NULL, NULL,
};

/* The sha256 of this file, given by the build (hatch_build.py): kernel.py uses the library only
 * when it was built from the source beside it, so a stale build is never called with the
 * arguments of a newer index.py. */
#ifndef HERMES_KERNEL_SOURCE_SHA256
#define HERMES_KERNEL_SOURCE_SHA256 ""
#endif

PyMODINIT_FUNC PyInit__kernel(void) {
    NAME_KEY = PyUnicode_InternFromString("name");
    SCORE_KEY = PyUnicode_InternFromString("score");
    MATCHED_KEY = PyUnicode_InternFromString("matched_tokens");
    NAME_ATTRIBUTE = NAME_KEY;
    if (NAME_KEY == NULL || SCORE_KEY == NULL || MATCHED_KEY == NULL) return NULL;
    PyObject *module = PyModule_Create(&kernel_module);
    if (module == NULL) return NULL;
    if (PyModule_AddIntConstant(module, "SCRATCH_HEADER", SCRATCH_HEADER) < 0 ||
        PyModule_AddIntConstant(module, "MAX_TOKENS", MAX_TOKENS) < 0 ||
        PyModule_AddIntConstant(module, "SCRATCH_SLOT", (long)SCRATCH_SLOT) < 0 ||
        PyModule_AddStringConstant(module, "IMPLEMENTATION", "c") < 0 ||
        PyModule_AddStringConstant(module, "SOURCE_SHA256", HERMES_KERNEL_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
