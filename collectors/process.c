/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "process.h"
#include "procmaps.h"
#include "util.h"

#define MAPS_MAX (16u * 1024 * 1024) /* a process with >100k mappings is not read */

int process_table_init(ProcessTable *pt, ObjectTable *objects, const char *proc_root) {
        *pt = (ProcessTable) { .objects = objects };
        pt->procs = hashmap_new(&uint64_hash_ops);
        pt->proc_root = strdup(proc_root ?: "/proc");
        if (!pt->procs || !pt->proc_root) {
                process_table_done(pt);
                return -ENOMEM;
        }
        return 0;
}

static void process_free(ProcessTable *pt, Process *p) {
        if (!p)
                return;
        if (pt->evict)
                pt->evict(pt->owner, p);
        if (pt->release && p->userdata)
                pt->release(p);
        addrmap_clear(pt->objects, &p->map);
        object_unref(pt->objects, p->exe);
        free(p);
}

void process_table_done(ProcessTable *pt) {
        Process *p;
        size_t i;

        if (pt->procs) {
                HASHMAP_FOREACH(p, pt->procs, i)
                        process_free(pt, p);
                hashmap_free(pt->procs);
        }
        hashmap_free(pt->no_abi);
        free(pt->proc_root);
        free(pt->exited);
        *pt = (ProcessTable) {};
}

Process *process_table_get(ProcessTable *pt, uint32_t pid) {
        return hashmap_get(pt->procs, INT_TO_KEY(pid));
}

/* Returns the live entry for pid, creating an empty one (a fresh entry
 * replaces one whose process has exited: the pid was reused). */
static Process *process_new(ProcessTable *pt, uint32_t pid) {
        Process *p, *old = NULL;

        p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->pid = pid;
        p->job.uid = JOB_UNSET;
        p->rank = JOB_UNSET;
        if (hashmap_replace(pt->procs, INT_TO_KEY(pid), p, (void **) &old) < 0) {
                free(p);
                return NULL;
        }
        process_free(pt, old);
        return p;
}

static Process *process_get_live(ProcessTable *pt, uint32_t pid) {
        Process *p = process_table_get(pt, pid);

        if (p && p->exit_time == 0)
                return p;
        p = process_new(pt, pid);
        if (p)
                p->partial = true;
        return p;
}

static void set_exe(ProcessTable *pt, Process *p, Object *o) {
        object_unref(pt->objects, p->exe);
        p->exe = object_ref(o);
}

static Object *object_for_mapping(ProcessTable *pt, const char *path, unsigned maj, unsigned min, uint64_t ino) {
        ObjectKind k = object_kind_for_path(path);

        if (k != OBJECT_FILE || ino == 0)
                return object_table_get_special(pt->objects, k == OBJECT_FILE ? OBJECT_ANON : k);
        return object_table_get_file(pt->objects, makedev(maj, min), ino, path);
}

int process_table_mmap(ProcessTable *pt, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                       unsigned maj, unsigned min, uint64_t ino, const char *path) {
        Process *p;
        Object *o;
        int r;

        if (len == 0 || start + len < start)
                return -EINVAL;
        p = process_get_live(pt, pid);
        if (!p)
                return -ENOMEM;
        o = object_for_mapping(pt, path, maj, min, ino);
        if (!o)
                return -ENOMEM;
        r = addrmap_insert(pt->objects, &p->map, start, start + len, pgoff, o);
        if (r >= 0 && p->want_exe && o->kind == OBJECT_FILE) {
                /* The kernel maps the new executable's text before the
                 * interpreter's, so the first file mapping after an exec is
                 * the executable. */
                set_exe(pt, p, o);
                p->want_exe = false;
        }
        object_unref(pt->objects, o);
        pt->stats.mmaps++;
        return r;
}

int process_table_comm(ProcessTable *pt, uint32_t pid, uint32_t tid, const char *comm, bool exec) {
        Process *p;

        if (!exec && pid != tid)
                return 0; /* a thread renaming itself does not rename the process */
        p = process_get_live(pt, pid);
        if (!p)
                return -ENOMEM;
        snprintf(p->comm, sizeof(p->comm), "%s", comm);
        if (exec) {
                if (pt->release && p->userdata)
                        pt->release(p);
                addrmap_clear(pt->objects, &p->map);
                set_exe(pt, p, NULL);
                p->want_exe = true;
                /* the job stays (exec keeps the cgroup), the environment may say
                 * more; and a launcher moves its child into the job's cgroup
                 * between fork and exec (slurmstepd does), so what the fork
                 * inherited of the cgroup is read again */
                p->job_state = JOB_UNRESOLVED;
                p->cgroup_read = false;
                p->partial = false; /* the new image's mappings follow as records */
                pt->stats.execs++;
        }
        return 0;
}

int process_table_fork(ProcessTable *pt, uint32_t pid, uint32_t ppid, uint32_t tid) {
        Process *parent, *child;
        int r;

        if (pid == ppid)
                return 0; /* a new thread */
        child = process_new(pt, pid);
        if (!child)
                return -ENOMEM;
        pt->stats.forks++;
        parent = process_table_get(pt, ppid);
        if (!parent) {
                child->partial = true;
                return 0;
        }
        memcpy(child->comm, parent->comm, sizeof(child->comm));
        r = addrmap_copy(&child->map, &parent->map);
        if (r < 0) {
                child->partial = true;
                return r;
        }
        set_exe(pt, child, parent->exe);
        child->want_exe = parent->want_exe;
        child->partial = parent->partial;
        /* a child starts in its parent's job; /proc may say more later */
        child->job = parent->job;
        memcpy(child->claim, parent->claim, sizeof(child->claim));
        child->cgroup_read = parent->cgroup_read;
        child->rank = parent->rank;
        if (pt->inherit && parent->userdata)
                pt->inherit(parent, child);
        return 0;
}

static void queue_exited(ProcessTable *pt, Process *p) {
        if (pt->exited_head > 0 && pt->exited_head == pt->exited_n) {
                pt->exited_head = pt->exited_n = 0;
        } else if (pt->exited_n == pt->exited_alloc) {
                ExitedPid *v;
                size_t na;

                /* reclaim the consumed front before growing */
                if (pt->exited_head > pt->exited_n / 2) {
                        memmove(pt->exited, pt->exited + pt->exited_head,
                                (pt->exited_n - pt->exited_head) * sizeof(*v));
                        pt->exited_n -= pt->exited_head;
                        pt->exited_head = 0;
                } else {
                        na = MAX(pt->exited_alloc * 2, (size_t) 64);
                        v = realloc(pt->exited, na * sizeof(*v));
                        if (!v)
                                return; /* it stays until the table is dropped */
                        pt->exited = v;
                        pt->exited_alloc = na;
                }
        }
        pt->exited[pt->exited_n++] = (ExitedPid) { p->pid, p->exit_time };
}

void process_table_exit(ProcessTable *pt, uint32_t pid, uint32_t tid, uint64_t time) {
        Process *p;

        if (pid != tid)
                return;
        p = process_table_get(pt, pid);
        if (p && p->exit_time == 0) {
                p->exit_time = time ?: 1;
                queue_exited(pt, p);
                pt->stats.exits++;
        }
}

Process *process_table_add_gone(ProcessTable *pt, uint32_t pid, const char *comm, uint64_t time) {
        Process *p = process_new(pt, pid);

        if (!p)
                return NULL;
        snprintf(p->comm, sizeof(p->comm), "%s", comm);
        p->exit_time = time ?: 1;
        p->scan_time = time ?: 1;
        queue_exited(pt, p);
        return p;
}

void process_table_evict(ProcessTable *pt, uint64_t before) {
        /* Exit times arrive in (nearly) time order; a pid whose entry was
         * replaced since (reuse) no longer matches its queued exit time. */
        while (pt->exited_head < pt->exited_n && pt->exited[pt->exited_head].exit_time < before) {
                ExitedPid e = pt->exited[pt->exited_head++];
                Process *p = process_table_get(pt, e.pid);

                if (p && p->exit_time == e.exit_time) {
                        process_free(pt, hashmap_remove(pt->procs, INT_TO_KEY(e.pid)));
                        pt->stats.evicted++;
                }
        }
}

struct scan_ctx {
        ProcessTable *pt;
        AddrMap map;
        dev_t exe_dev;
        ino_t exe_ino;
        Object *exe;
};

static int scan_line(const ProcMapsEntry *e, void *userdata) {
        struct scan_ctx *c = userdata;
        Object *o;
        int r;

        if (!e->executable)
                return 0;
        o = object_for_mapping(c->pt, e->path, e->maj, e->min, e->ino);
        if (!o)
                return -ENOMEM;
        r = addrmap_insert(c->pt->objects, &c->map, e->start, e->end, e->pgoff, o);
        if (r >= 0 && !c->exe && o->kind == OBJECT_FILE && o->ino == c->exe_ino && o->dev == c->exe_dev)
                c->exe = o;
        object_unref(c->pt->objects, o);
        return r;
}

int process_table_scan(ProcessTable *pt, uint32_t pid, uint32_t tid, uint64_t now, Process **ret) {
        _cleanup_free_ char *maps = NULL, *comm = NULL;
        char dir[256], path[300];
        struct scan_ctx c = { .pt = pt };
        struct stat st;
        size_t size;
        Process *p;
        int r;

        if (tid != 0 && tid != pid)
                snprintf(dir, sizeof(dir), "%s/%u/task/%u", pt->proc_root, pid, tid);
        else
                snprintf(dir, sizeof(dir), "%s/%u", pt->proc_root, pid);

        snprintf(path, sizeof(path), "%s/maps", dir);
        r = read_full_file(path, MAPS_MAX, &maps, &size);
        if (r < 0) {
                pt->stats.scan_failures++;
                return r == -ENOENT ? -ESRCH : r;
        }
        snprintf(path, sizeof(path), "%s/exe", dir);
        if (stat(path, &st) >= 0) {
                c.exe_dev = st.st_dev;
                c.exe_ino = st.st_ino;
        }
        r = procmaps_parse(maps, size, scan_line, &c);
        if (r < 0) {
                addrmap_clear(pt->objects, &c.map);
                pt->stats.scan_failures++;
                return r;
        }
        pt->stats.bad_map_lines += (uint64_t) r;
        pt->stats.scans++;

        p = process_table_get(pt, pid);
        if (!p || p->exit_time != 0) {
                p = process_new(pt, pid);
                if (!p) {
                        addrmap_clear(pt->objects, &c.map);
                        return -ENOMEM;
                }
        }
        snprintf(path, sizeof(path), "%s/%u/comm", pt->proc_root, pid);
        if (read_one_line(path, &comm) >= 0)
                snprintf(p->comm, sizeof(p->comm), "%s", comm);
        addrmap_clear(pt->objects, &p->map);
        p->map = c.map;
        if (c.exe)
                set_exe(pt, p, c.exe);
        p->partial = false;
        p->want_exe = false;
        p->scan_time = now ?: 1;
        if (ret)
                *ret = p;
        return 0;
}

int process_table_scan_all(ProcessTable *pt, uint64_t now) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int n = 0;

        d = opendir(pt->proc_root);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uint32_t pid;

                if (safe_atou32(de->d_name, &pid) < 0 || pid == 0)
                        continue;
                if (process_table_scan(pt, pid, 0, now, NULL) >= 0)
                        n++;
        }
        return n;
}

static int open_checked(const char *path, const Object *o, struct stat *ret_st) {
        struct stat st;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != o->ino || st.st_dev != o->dev) {
                close(fd);
                return -ESTALE;
        }
        if (ret_st)
                *ret_st = st;
        return fd;
}

/* Opens the file behind m, as the process sees it if it still lives. */
static int open_mapping_file(ProcessTable *pt, const Process *p, const Mapping *m, struct stat *ret_st) {
        char path[300];
        int fd;

        snprintf(path, sizeof(path), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, pt->proc_root, p->pid, m->start,
                 m->end);
        fd = p->exit_time == 0 ? open_checked(path, m->obj, ret_st) : -ESRCH;
        if (fd < 0)
                fd = open_checked(m->obj->path, m->obj, ret_st);
        return fd;
}

int process_table_open_object(ProcessTable *pt, const Object *o, const Process *p, const Mapping *m) {
        if (o->kind != OBJECT_FILE)
                return -ENOENT;
        if (p && m && m->obj == o)
                return open_mapping_file(pt, p, m, NULL);
        return open_checked(o->path, o, NULL);
}

void process_table_load_build_id(ProcessTable *pt, const Process *p, const Mapping *m) {
        Object *o = m->obj;
        struct stat st;
        int fd, r;

        if (o->build_id_tried)
                return;
        o->build_id_tried = true;
        fd = open_mapping_file(pt, p, m, &st);
        if (fd < 0)
                return;
        r = buildid_read_fd(fd, o->build_id);
        close(fd);
        if (r > 0)
                o->build_id_size = (uint8_t) r;
        o->build_id_none = r == -ENOENT;
        o->file_size = (uint64_t) st.st_size;
        o->file_mtime_ns = (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

/* At most this many files remembered without lmk_abi; then forgotten all
 * at once (a node runs far fewer distinct programs). */
#define NO_ABI_MAX 4096

static uint64_t file_identity(const struct stat *st) {
        const uint64_t id[] = { st->st_dev, st->st_ino, (uint64_t) st->st_size,
                                (uint64_t) st->st_mtim.tv_sec * 1000000000 + (uint64_t) st->st_mtim.tv_nsec,
                                (uint64_t) st->st_ctim.tv_sec * 1000000000 + (uint64_t) st->st_ctim.tv_nsec };

        return hash_bytes(id, sizeof(id), 0);
}

static void remember_no_abi(ProcessTable *pt, uint64_t id) {
        if (!pt->no_abi && !(pt->no_abi = hashmap_new(&uint64_hash_ops)))
                return;
        if (hashmap_size(pt->no_abi) >= NO_ABI_MAX)
                hashmap_clear(pt->no_abi);
        (void) hashmap_put(pt->no_abi, INT_TO_KEY(id), pt); /* any non-NULL value */
}

int process_table_abi_address(ProcessTable *pt, const Process *p, const Mapping *m, uint64_t *ret) {
        Object *o = m->obj;
        struct stat st;
        uint64_t id;
        size_t n;
        int fd, r;

        if (o->kind != OBJECT_FILE)
                return -ENOENT;
        if (!o->abi_tried) {
                o->abi_tried = true;
                fd = open_mapping_file(pt, p, m, &st);
                if (fd < 0)
                        return fd;
                id = file_identity(&st);
                if (pt->no_abi && hashmap_get(pt->no_abi, INT_TO_KEY(id))) {
                        close(fd);
                        o->abi_vaddr = 0;
                        return -ENOENT;
                }
                r = elf_find_symbol(fd, "lmk_abi", &o->abi_vaddr, o->loads, ELEMENTSOF(o->loads), &n);
                if (r < 0) {
                        o->abi_vaddr = 0;
                        if (r == -ENOENT)
                                remember_no_abi(pt, id);
                } else {
                        o->n_loads = (uint8_t) n;
                        /* an executable that merely refers to liblmk's lmk_abi has a
                         * copy of it (copy relocation) but not the probes */
                        o->has_probes = elf_has_usdt_provider(fd, "lmk");
                }
                close(fd);
        }
        if (o->abi_vaddr == 0)
                return -ENOENT;
        return elf_runtime_address(o->loads, o->n_loads, m->start, m->pgoff, o->abi_vaddr, ret);
}
