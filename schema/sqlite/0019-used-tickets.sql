-- SPDX-License-Identifier: GPL-2.0-or-later
-- Login tickets already used (docs/web.md): the stores behind one address
-- share the session key that signs tickets and this database, so a ticket
-- is recorded here and works once across all of them. The nonce is the
-- ticket's random 64 bits, expires its end (Unix seconds); lmk-store
-- deletes a row an hour after its ticket expired, as it records another.
CREATE TABLE used_tickets (
        nonce INTEGER NOT NULL,
        expires INTEGER NOT NULL,
        PRIMARY KEY (nonce)
) WITHOUT ROWID;
CREATE INDEX used_tickets_by_expires ON used_tickets (expires);
