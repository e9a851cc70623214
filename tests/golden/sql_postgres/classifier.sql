/* rulegen SQL (postgres): classification of 'kind', 1 tree(s), aggregation sum, link identity, dtype float64 */
/* features: 'a' (numeric), 'b' (numeric), 'c' (numeric) */
/* classes: 'setosa', 'versicolor', 'virginica' */
/* NULL is missing; NaN is missing too */
WITH
"_rg_s0" AS (
  /* inputs, NaN read as missing */
  SELECT
    "a",
    "b",
    "c",
    NULLIF("a", 'NaN'::float8) AS "_rg_x0",
    NULLIF("b", 'NaN'::float8) AS "_rg_x1",
    NULLIF("c", 'NaN'::float8) AS "_rg_x2"
  FROM "data"
  OFFSET 0
),
"_rg_s1" AS (
  /* tree 0: preparation 1 */
  SELECT
    "a",
    "b",
    "c",
    /* tree 0: leaf node id */
    CASE
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= '0.30000000000000004'::float8)) AND "_rg_x1" <= '1.0999999642372131'::float8 THEN 3 /* tree 0 leaf 3 samples=10 dist=[10, 0, 0] */
      WHEN "_rg_x0" <= '0.30000000000000004'::float8 THEN 7 /* tree 0 leaf 7 samples=4 dist=[1, 2, 1] */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= '0.30000000000000004'::float8)) THEN 8 /* tree 0 leaf 8 samples=1 dist=[0, 0, 1] */
      WHEN ("_rg_x1" IS NULL OR ("_rg_x1" <= '-2.499999837614101e-39'::float8)) AND "_rg_x2" <= '1e-300'::float8 THEN 9 /* tree 0 leaf 9 samples=2 dist=[1, 1, 0] */
      WHEN "_rg_x2" <= '1e-300'::float8 THEN 10 /* tree 0 leaf 10 samples=3 dist=[1, 1, 1] */
      ELSE 6 /* tree 0 leaf 6 samples=30 dist=[3, 6, 21] */
    END AS "_rg_t0"
  FROM "_rg_s0"
  OFFSET 0
),
"_rg_s2" AS (
  /* tree 0: accumulate */
  SELECT
    "a",
    "b",
    "c",
    '0.0'::float8
    + CASE "_rg_t0" WHEN 3 THEN '1.0'::float8 WHEN 7 THEN '0.25'::float8 WHEN 8 THEN '0.0'::float8 WHEN 9 THEN '0.5'::float8 WHEN 10 THEN '0.3333333333333333'::float8 ELSE '0.1'::float8 END AS "_rg_a0",
    '0.0'::float8
    + CASE "_rg_t0" WHEN 3 THEN '0.0'::float8 WHEN 7 THEN '0.5'::float8 WHEN 8 THEN '0.0'::float8 WHEN 9 THEN '0.5'::float8 WHEN 10 THEN '0.3333333333333333'::float8 ELSE '0.2'::float8 END AS "_rg_a1",
    '0.0'::float8
    + CASE "_rg_t0" WHEN 3 THEN '0.0'::float8 WHEN 7 THEN '0.25'::float8 WHEN 8 THEN '1.0'::float8 WHEN 9 THEN '0.0'::float8 WHEN 10 THEN '0.3333333333333333'::float8 ELSE '0.7'::float8 END AS "_rg_a2"
  FROM "_rg_s1"
  OFFSET 0
)
SELECT
  "a",
  "b",
  "c",
  CASE WHEN "_rg_a0" >= "_rg_a1" AND "_rg_a0" >= "_rg_a2" THEN 'setosa' WHEN "_rg_a1" >= "_rg_a2" THEN 'versicolor' ELSE 'virginica' END AS "prediction",
  "_rg_a0" AS "prob_setosa",
  "_rg_a1" AS "prob_versicolor",
  "_rg_a2" AS "prob_virginica"
FROM "_rg_s2";
