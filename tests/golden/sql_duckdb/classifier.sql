/* rulegen SQL (duckdb): classification of 'kind', 1 tree(s), aggregation sum, link identity, dtype float64 */
/* features: 'a' (numeric), 'b' (numeric), 'c' (numeric) */
/* classes: 'setosa', 'versicolor', 'virginica' */
/* NULL is missing; NaN is missing too */
WITH
"_rg_s0" AS (
  /* tree 0: outputs */
  SELECT
    "a",
    "b",
    "c",
    CASE
      WHEN "a" BETWEEN 0.3000000000000001e0 AND 'inf'::DOUBLE THEN CASE
        WHEN "c" <= 1e-300 THEN CASE WHEN "b" BETWEEN (-2.4999998376141007e-39) AND 'inf'::DOUBLE THEN 0.3333333333333333e0 /* tree 0 leaf 10 samples=3 dist=[1, 1, 1] */ ELSE 0.5e0 /* tree 0 leaf 9 samples=2 dist=[1, 1, 0] */ END
        ELSE 0.1e0 /* tree 0 leaf 6 samples=30 dist=[3, 6, 21] */ END
      ELSE CASE
        WHEN "b" <= 1.0999999642372131e0 THEN 1.0e0 /* tree 0 leaf 3 samples=10 dist=[10, 0, 0] */
        ELSE CASE WHEN "a" <= 'inf'::DOUBLE THEN 0.25e0 /* tree 0 leaf 7 samples=4 dist=[1, 2, 1] */ ELSE 0.0e0 /* tree 0 leaf 8 samples=1 dist=[0, 0, 1] */ END END END AS "_rg_v0",
    CASE
      WHEN "a" BETWEEN 0.3000000000000001e0 AND 'inf'::DOUBLE THEN CASE
        WHEN "c" <= 1e-300 THEN CASE WHEN "b" BETWEEN (-2.4999998376141007e-39) AND 'inf'::DOUBLE THEN 0.3333333333333333e0 ELSE 0.5e0 END
        ELSE 0.2e0 END
      ELSE CASE
        WHEN "b" <= 1.0999999642372131e0 THEN 0.0e0
        ELSE CASE WHEN "a" <= 'inf'::DOUBLE THEN 0.5e0 ELSE 0.0e0 END END END AS "_rg_v1",
    CASE
      WHEN "a" BETWEEN 0.3000000000000001e0 AND 'inf'::DOUBLE THEN CASE
        WHEN "c" <= 1e-300 THEN CASE WHEN "b" BETWEEN (-2.4999998376141007e-39) AND 'inf'::DOUBLE THEN 0.3333333333333333e0 ELSE 0.0e0 END
        ELSE 0.7e0 END
      ELSE CASE
        WHEN "b" <= 1.0999999642372131e0 THEN 0.0e0
        ELSE CASE WHEN "a" <= 'inf'::DOUBLE THEN 0.25e0 ELSE 1.0e0 END END END AS "_rg_v2"
  FROM "data"
)
SELECT
  "a",
  "b",
  "c",
  CASE WHEN "_rg_v0" >= "_rg_v1" AND "_rg_v0" >= "_rg_v2" THEN 'setosa' WHEN "_rg_v1" >= "_rg_v2" THEN 'versicolor' ELSE 'virginica' END AS "prediction",
  "_rg_v0" AS "prob_setosa",
  "_rg_v1" AS "prob_versicolor",
  "_rg_v2" AS "prob_virginica"
FROM "_rg_s0";
