/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* How a database is opened: what lmk-store asks of the storage
 * (storage.h's open) and the storage of each connection it makes through a
 * driver (db.h's connect). */
typedef struct StorageOptions {
        unsigned readers;        /* read connections for concurrent queries */
        unsigned writers;        /* write connections where the database lets them write
                                  * side by side (PostgreSQL); 0 or 1: one */
        unsigned busy_timeout_ms;
} StorageOptions;
