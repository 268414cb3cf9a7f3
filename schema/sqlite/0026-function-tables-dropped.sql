-- SPDX-License-Identifier: GPL-2.0-or-later
-- job_functions and job_phase_functions (0021) go: their rows are in
-- job_function_packs, which lmk-store filled from them after 0025.
DROP TABLE job_functions;
DROP TABLE job_phase_functions;
