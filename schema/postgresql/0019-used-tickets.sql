-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0019-used-tickets.sql.
CREATE TABLE used_tickets (
        nonce BIGINT NOT NULL,
        expires BIGINT NOT NULL,
        PRIMARY KEY (nonce)
);
CREATE INDEX used_tickets_by_expires ON used_tickets (expires);
