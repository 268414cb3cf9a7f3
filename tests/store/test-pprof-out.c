/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pprof writer read back: gunzip, then a small protobuf reader of
 * profile.proto's fields (tests/store/test-profile.py reads the same
 * files with pprof itself). */
#include <zlib.h>

#include "http/pprof-out.h"
#include "macro.h"
#include "tests.h"

#define MAX_ITEMS 64

typedef struct Field {
        unsigned number, wire;
        uint64_t v;             /* a varint */
        const uint8_t *p;       /* length-delimited */
        size_t n;
} Field;

/* The next field of [*at, end); false at the end. Fails the test on
 * anything profile.proto does not use. */
static bool next_field(const uint8_t **at, const uint8_t *end, Field *f) {
        uint64_t key = 0, v = 0;
        const uint8_t *p = *at;

        if (p == end)
                return false;
        for (unsigned shift = 0;; shift += 7) {
                if (p == end || shift > 63)
                        test_fail("truncated varint");
                key |= (uint64_t) (*p & 0x7f) << shift;
                if (!(*p++ & 0x80))
                        break;
        }
        *f = (Field) { .number = (unsigned) (key >> 3), .wire = (unsigned) (key & 7) };
        for (unsigned shift = 0;; shift += 7) {
                if (p == end || shift > 63)
                        test_fail("truncated varint");
                v |= (uint64_t) (*p & 0x7f) << shift;
                if (!(*p++ & 0x80))
                        break;
        }
        if (f->wire == 0)
                f->v = v;
        else if (f->wire == 2) {
                if (v > (uint64_t) (end - p))
                        test_fail("field %u: length %" PRIu64 " past the end", f->number, v);
                f->p = p;
                f->n = (size_t) v;
                p += v;
        } else
                test_fail("field %u: wire type %u", f->number, f->wire);
        *at = p;
        return true;
}

typedef struct Sample {
        uint64_t location;
        int64_t values[2];
        size_t n_values;
        uint64_t label_key, label_str;
        size_t n_labels;
} Sample;

typedef struct Mapping {
        uint64_t id, start, limit, offset, filename, build_id, has_functions;
} Mapping;

typedef struct Location {
        uint64_t id, mapping, address, function;
        size_t n_lines;
} Location;

typedef struct Profile {
        char *strings[MAX_ITEMS];
        size_t n_strings;
        uint64_t sample_types[2][2];
        size_t n_sample_types;
        Sample samples[MAX_ITEMS];
        size_t n_samples;
        Mapping mappings[MAX_ITEMS];
        size_t n_mappings;
        Location locations[MAX_ITEMS];
        size_t n_locations;
        uint64_t functions[MAX_ITEMS][2]; /* id, name */
        size_t n_functions;
        uint64_t period_type[2], time_ns, duration_ns, period, comments[4];
        size_t n_comments;
} Profile;

static void read_value_type(const uint8_t *p, size_t n, uint64_t ret[2]) {
        const uint8_t *end = p + n;
        Field f;

        while (next_field(&p, end, &f))
                ret[f.number - 1] = f.v;
}

static void read_sample(const uint8_t *p, size_t n, Sample *s) {
        const uint8_t *end = p + n;
        Field f, g;

        while (next_field(&p, end, &f)) {
                if (f.number == 1)
                        s->location = f.v;
                else if (f.number == 2) {
                        /* packed */
                        const uint8_t *q = f.p, *qend = f.p + f.n;

                        ASSERT_EQ(f.wire, 2);
                        while (q < qend) {
                                uint64_t v = 0;

                                for (unsigned shift = 0;; shift += 7) {
                                        v |= (uint64_t) (*q & 0x7f) << shift;
                                        if (!(*q++ & 0x80))
                                                break;
                                }
                                ASSERT_TRUE(s->n_values < 2);
                                s->values[s->n_values++] = (int64_t) v;
                        }
                } else if (f.number == 3) {
                        const uint8_t *q = f.p;

                        s->n_labels++;
                        while (next_field(&q, f.p + f.n, &g))
                                if (g.number == 1)
                                        s->label_key = g.v;
                                else if (g.number == 2)
                                        s->label_str = g.v;
                }
        }
}

static void read_profile(const char *gz, size_t size, Profile *pr) {
        static uint8_t raw[1 << 20];
        z_stream z = {};
        const uint8_t *p = raw, *end;
        Field f, g;

        /* a gzip file: its magic first */
        ASSERT_TRUE(size > 2 && (uint8_t) gz[0] == 0x1f && (uint8_t) gz[1] == 0x8b);
        ASSERT_EQ(inflateInit2(&z, 16 + 15), Z_OK);
        z.next_in = (Bytef *) gz;
        z.avail_in = (uInt) size;
        z.next_out = raw;
        z.avail_out = sizeof(raw);
        ASSERT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
        end = raw + z.total_out;
        inflateEnd(&z);

        *pr = (Profile) {};
        while (next_field(&p, end, &f)) {
                const uint8_t *q = f.p;

                switch (f.number) {
                case 1:
                        ASSERT_TRUE(pr->n_sample_types < 2);
                        read_value_type(f.p, f.n, pr->sample_types[pr->n_sample_types++]);
                        break;
                case 2:
                        ASSERT_TRUE(pr->n_samples < MAX_ITEMS);
                        read_sample(f.p, f.n, &pr->samples[pr->n_samples++]);
                        break;
                case 3: {
                        Mapping *m = &pr->mappings[pr->n_mappings++];
                        uint64_t *v[] = { NULL, &m->id, &m->start, &m->limit, &m->offset, &m->filename,
                                          &m->build_id, &m->has_functions };

                        while (next_field(&q, f.p + f.n, &g))
                                if (g.number < ELEMENTSOF(v))
                                        *v[g.number] = g.v;
                        break;
                }
                case 4: {
                        Location *l = &pr->locations[pr->n_locations++];

                        while (next_field(&q, f.p + f.n, &g))
                                if (g.number == 1)
                                        l->id = g.v;
                                else if (g.number == 2)
                                        l->mapping = g.v;
                                else if (g.number == 3)
                                        l->address = g.v;
                                else if (g.number == 4) {
                                        const uint8_t *r = g.p;
                                        Field h;

                                        l->n_lines++;
                                        while (next_field(&r, g.p + g.n, &h))
                                                if (h.number == 1)
                                                        l->function = h.v;
                                }
                        break;
                }
                case 5: {
                        uint64_t *fn = pr->functions[pr->n_functions++];

                        while (next_field(&q, f.p + f.n, &g))
                                if (g.number <= 2)
                                        fn[g.number - 1] = g.v;
                        break;
                }
                case 6:
                        ASSERT_TRUE(pr->n_strings < MAX_ITEMS);
                        pr->strings[pr->n_strings++] = strndup((const char *) f.p, f.n);
                        break;
                case 9:
                        pr->time_ns = f.v;
                        break;
                case 10:
                        pr->duration_ns = f.v;
                        break;
                case 11:
                        read_value_type(f.p, f.n, pr->period_type);
                        break;
                case 12:
                        pr->period = f.v;
                        break;
                case 13:
                        pr->comments[pr->n_comments++] = f.v;
                        break;
                default:
                        test_fail("unexpected field %u of Profile", f.number);
                }
        }
}

static void profile_done(Profile *pr) {
        for (size_t i = 0; i < pr->n_strings; i++)
                free(pr->strings[i]);
}

static const char *str(const Profile *pr, uint64_t i) {
        if (i >= pr->n_strings)
                test_fail("string %" PRIu64 " of %zu", i, pr->n_strings);
        return pr->strings[i];
}

static const Location *location(const Profile *pr, uint64_t id) {
        for (size_t i = 0; i < pr->n_locations; i++)
                if (pr->locations[i].id == id)
                        return &pr->locations[i];
        test_fail("no location %" PRIu64, id);
}

static const Mapping *mapping(const Profile *pr, uint64_t id) {
        for (size_t i = 0; i < pr->n_mappings; i++)
                if (pr->mappings[i].id == id)
                        return &pr->mappings[i];
        test_fail("no mapping %" PRIu64, id);
}

static const char *function_name(const Profile *pr, uint64_t id) {
        for (size_t i = 0; i < pr->n_functions; i++)
                if (pr->functions[i][0] == id)
                        return str(pr, pr->functions[i][1]);
        test_fail("no function %" PRIu64, id);
}

/* A sample's function ("" for an unnamed one), its object and phase. */
static const char *sample_function(const Profile *pr, size_t i) {
        const Location *l = location(pr, pr->samples[i].location);

        return l->n_lines ? function_name(pr, l->function) : "";
}

static const char *sample_object(const Profile *pr, size_t i) {
        return str(pr, mapping(pr, location(pr, pr->samples[i].location)->mapping)->filename);
}

static const char *sample_phase(const Profile *pr, size_t i) {
        const Sample *s = &pr->samples[i];

        if (s->n_labels == 0)
                return NULL;
        ASSERT_EQ(s->n_labels, 1);
        ASSERT_STREQ(str(pr, s->label_key), "phase");
        return str(pr, s->label_str);
}

#define LIB "/usr/lib/x86_64-linux-gnu/libopenblas.so.0"
#define EXE "/home/alice/bin/solver"
#define HOSTILE "std::vector<std::pair<int, double>, a;b>::operator<=(x&) \"ü\""

TEST(round_trip) {
        const PprofEntry e[] = {
                { LIB, "bb22", "dgemm_kernel_HASWELL", 0, "scf", 580, 580000000000 },
                { LIB, "bb22", "dgemm_kernel_HASWELL", 0, "init", 20, 20000000000 },
                { EXE, "aa11", NULL, 0x21000, "scf", 40, 40000000000 },
                { EXE, "aa11", NULL, 0x5000, NULL, 2, 200000000 },
                { EXE, "aa11", "(other functions)", 0, NULL, 7, 7000000000 },
                { EXE, "aa11", HOSTILE, 0, "", 300, (int64_t) 1 << 42 },
                { EXE, "cc33", "main", 0, NULL, 1, 10000000 }, /* the same file, another build */
        };
        const char *comments[] = { "lmk job 4711 on demo", NULL };
        const PprofProfile p = { e, ELEMENTSOF(e), 1795550401000000000, 58700000000, NULL, 10000000, comments };
        _cleanup_free_ char *gz = NULL;
        size_t size;
        Profile pr;

        ASSERT_OK(pprof_write(&p, &gz, &size));
        read_profile(gz, size, &pr);

        ASSERT_STREQ(str(&pr, 0), "");
        ASSERT_EQ(pr.n_sample_types, 2);
        ASSERT_STREQ(str(&pr, pr.sample_types[0][0]), "samples");
        ASSERT_STREQ(str(&pr, pr.sample_types[0][1]), "count");
        ASSERT_STREQ(str(&pr, pr.sample_types[1][0]), "cpu");
        ASSERT_STREQ(str(&pr, pr.sample_types[1][1]), "nanoseconds");
        ASSERT_STREQ(str(&pr, pr.period_type[0]), "cpu");
        ASSERT_STREQ(str(&pr, pr.period_type[1]), "nanoseconds");
        ASSERT_U64_EQ(pr.period, 10000000);
        ASSERT_U64_EQ(pr.time_ns, 1795550401000000000);
        ASSERT_U64_EQ(pr.duration_ns, 58700000000);
        ASSERT_EQ(pr.n_comments, 1);
        ASSERT_STREQ(str(&pr, pr.comments[0]), "lmk job 4711 on demo");

        /* a sample per entry, in order, with its values, function, object and phase */
        ASSERT_EQ(pr.n_samples, ELEMENTSOF(e));
        for (size_t i = 0; i < ELEMENTSOF(e); i++) {
                ASSERT_EQ(pr.samples[i].n_values, 2);
                ASSERT_EQ(pr.samples[i].values[0], e[i].samples);
                ASSERT_EQ(pr.samples[i].values[1], e[i].cpu);
                ASSERT_STREQ(sample_function(&pr, i), e[i].function ?: "");
                ASSERT_STREQ(sample_object(&pr, i), e[i].object);
                if (e[i].phase && *e[i].phase)
                        ASSERT_STREQ(sample_phase(&pr, i), e[i].phase);
                else
                        ASSERT_NULL(sample_phase(&pr, i));
        }
        /* one function and location for the same function in two phases */
        ASSERT_EQ(pr.samples[0].location, pr.samples[1].location);
        ASSERT_EQ(pr.n_locations, 6);
        ASSERT_EQ(pr.n_functions, 4);

        /* a mapping per file and build, apart, with its build-id */
        ASSERT_EQ(pr.n_mappings, 3);
        for (size_t i = 0; i < pr.n_mappings; i++) {
                const Mapping *m = &pr.mappings[i];

                ASSERT_TRUE(m->start > 0 && m->start < m->limit);
                for (size_t k = 0; k < i; k++)
                        ASSERT_TRUE(m->start >= pr.mappings[k].limit || m->limit <= pr.mappings[k].start);
        }
        {
                const Location *l = location(&pr, pr.samples[2].location);
                const Mapping *m = mapping(&pr, l->mapping);

                /* unnamed: no line, its file offset within its mapping, for pprof to name */
                ASSERT_EQ(l->n_lines, 0);
                ASSERT_U64_EQ(l->address - m->start + m->offset, 0x21000);
                ASSERT_TRUE(l->address < m->limit);
                ASSERT_STREQ(str(&pr, m->build_id), "aa11");
                ASSERT_EQ(m->has_functions, 0);
                /* the mapping starts at the lowest unnamed offset, as a process's
                 * mapping of the file's code would */
                ASSERT_U64_EQ(m->offset, 0x5000);
                l = location(&pr, pr.samples[3].location);
                ASSERT_EQ(l->n_lines, 0);
                ASSERT_U64_EQ(l->address - m->start + m->offset, 0x5000);
                m = mapping(&pr, location(&pr, pr.samples[0].location)->mapping);
                ASSERT_STREQ(str(&pr, m->build_id), "bb22");
                ASSERT_EQ(m->has_functions, 1);
                m = mapping(&pr, location(&pr, pr.samples[6].location)->mapping);
                ASSERT_STREQ(str(&pr, m->build_id), "cc33");
                ASSERT_STREQ(str(&pr, m->filename), EXE);
        }
        profile_done(&pr);
}

TEST(empty) {
        const PprofProfile p = {};
        _cleanup_free_ char *gz = NULL;
        size_t size;
        Profile pr;

        ASSERT_OK(pprof_write(&p, &gz, &size));
        read_profile(gz, size, &pr);
        ASSERT_EQ(pr.n_samples, 0);
        ASSERT_EQ(pr.n_mappings, 0);
        ASSERT_EQ(pr.n_sample_types, 2);
        ASSERT_STREQ(str(&pr, 0), "");
        profile_done(&pr);
}

TEST(offset_overflow) {
        const PprofEntry past[] = {
                { EXE, NULL, NULL, UINT64_MAX - 100, NULL, 1, 1 },
        };
        /* each fits, but not the range between them */
        const PprofEntry wide[] = {
                { EXE, NULL, NULL, 0, NULL, 1, 1 },
                { EXE, NULL, NULL, UINT64_MAX - 3 * 4096, NULL, 1, 1 },
        };
        const PprofProfile p = { past, ELEMENTSOF(past) }, q = { wide, ELEMENTSOF(wide) };
        char *gz = NULL;
        size_t size;

        ASSERT_ERROR(pprof_write(&p, &gz, &size), EOVERFLOW);
        ASSERT_ERROR(pprof_write(&q, &gz, &size), EOVERFLOW);
        ASSERT_NULL(gz);
}

int main(void) {
        RUN(round_trip);
        RUN(empty);
        RUN(offset_overflow);
        return 0;
}
