/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A SPANK plugin that calls itself lmk and takes --lmk and --lmk-notes
 * without checking them: what a user may load into their own sbatch
 * (SLURM_CONF is theirs to set). Slurm forwards its options to the node
 * by the plugin's and the option's names, so the node's lmk.so reads
 * whatever this one passed (test-slurm-optout-trust.py). */
#include <slurm/spank.h>
#include <stddef.h>

SPANK_PLUGIN(lmk, 1);

static int take(int val, const char *optarg, int remote) {
        (void) val;
        (void) optarg;
        (void) remote;
        return 0;
}

static struct spank_option options[] = {
        { (char *) "lmk", (char *) "anything", (char *) "passed on unchecked", 1, 1, take },
        { (char *) "lmk-notes", (char *) "anything", (char *) "passed on unchecked", 1, 2, take },
};

int slurm_spank_init(spank_t sp, int ac, char **av) {
        (void) ac;
        (void) av;
        for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
                (void) spank_option_register(sp, &options[i]);
        return 0;
}
