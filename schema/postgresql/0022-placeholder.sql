-- SPDX-License-Identifier: GPL-2.0-or-later
-- PLACEHOLDER for branch i32-spank only: 0022 belongs to other work; drop
-- this file (and its line in schema/meson.build) when merging.
SELECT 1;
