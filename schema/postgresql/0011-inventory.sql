-- SPDX-License-Identifier: GPL-2.0-or-later
-- PostgreSQL dialect of schema/sqlite/0011-inventory.sql. objects.last_seen is
-- filled in with one pass over object_hours (whose key starts with the
-- bucket, so a lookup per object would read all of it each time).
CREATE TABLE packages (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        manager TEXT NOT NULL,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        arch TEXT NOT NULL,
        hash TEXT NOT NULL,
        prefix TEXT NOT NULL,
        size BIGINT NOT NULL,
        UNIQUE (manager, name, version, arch, hash, prefix)
);
CREATE TABLE package_files (
        package_id BIGINT NOT NULL,
        path TEXT NOT NULL,
        PRIMARY KEY (package_id, path)
);
CREATE INDEX package_files_by_path ON package_files (path);
CREATE TABLE node_packages (
        node_id BIGINT NOT NULL,
        package_id BIGINT NOT NULL,
        PRIMARY KEY (node_id, package_id)
);
CREATE INDEX node_packages_by_package ON node_packages (package_id);
ALTER TABLE nodes ADD COLUMN inventory_digest TEXT;
ALTER TABLE nodes ADD COLUMN inventory_at BIGINT;
ALTER TABLE objects ADD COLUMN last_seen BIGINT;
UPDATE objects SET last_seen = h.last
        FROM (SELECT object_id, max(bucket) AS last FROM object_hours GROUP BY object_id) h
        WHERE h.object_id = objects.id;
