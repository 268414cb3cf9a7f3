-- SPDX-License-Identifier: GPL-2.0-or-later
-- The software installed on the nodes (docs/inventory.md), from the
-- inventory lmkd sends when it changes: packages (Debian, Spack, EasyBuild,
-- /opt trees) with their size and the real paths of their executables and
-- libraries, and which node has which. A sampled object belongs to the
-- packages that list its path. Absent attributes are '' so that the unique
-- key holds. objects.last_seen is the last hour an object had samples, for
-- "last used" (filled in here from the hours stored before).
CREATE TABLE packages (
        id INTEGER PRIMARY KEY,
        manager TEXT NOT NULL,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        arch TEXT NOT NULL,
        hash TEXT NOT NULL,
        prefix TEXT NOT NULL,
        size INTEGER NOT NULL,
        UNIQUE (manager, name, version, arch, hash, prefix)
);
CREATE TABLE package_files (
        package_id INTEGER NOT NULL,
        path TEXT NOT NULL,
        PRIMARY KEY (package_id, path)
) WITHOUT ROWID;
CREATE INDEX package_files_by_path ON package_files (path);
CREATE TABLE node_packages (
        node_id INTEGER NOT NULL,
        package_id INTEGER NOT NULL,
        PRIMARY KEY (node_id, package_id)
) WITHOUT ROWID;
CREATE INDEX node_packages_by_package ON node_packages (package_id);
ALTER TABLE nodes ADD COLUMN inventory_digest TEXT;
ALTER TABLE nodes ADD COLUMN inventory_at INTEGER;
ALTER TABLE objects ADD COLUMN last_seen INTEGER;
UPDATE objects SET last_seen = (SELECT max(h.bucket) FROM object_hours h WHERE h.object_id = objects.id);
