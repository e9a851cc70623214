/* rulegen SQL (postgres): classification of 'kind', 1 tree(s), aggregation sum, link identity, dtype float64 */
/* features: 'a' (numeric), 'b' (numeric), 'c' (numeric) */
/* classes: 'setosa', 'versicolor', 'virginica' */
/* NULL is missing; NaN is missing too */
SELECT
  "a",
  "b",
  "c",
  CASE
      WHEN "a" >= '0.3000000000000001'::float8 AND "a" <= 'Infinity'::float8 THEN CASE WHEN "c" <= '1e-300'::float8 THEN 'setosa' ELSE 'virginica' END
      ELSE CASE
        WHEN "b" <= '1.0999999642372131'::float8 THEN 'setosa'
        ELSE CASE WHEN "a" <= 'Infinity'::float8 THEN 'versicolor' ELSE 'virginica' END END END AS "prediction",
  CASE
      WHEN "a" >= '0.3000000000000001'::float8 AND "a" <= 'Infinity'::float8 THEN CASE
        WHEN "c" <= '1e-300'::float8 THEN CASE WHEN "b" >= '-2.4999998376141007e-39'::float8 AND "b" <= 'Infinity'::float8 THEN '0.3333333333333333'::float8 /* tree 0 leaf 10 samples=3 dist=[1, 1, 1] */ ELSE '0.5'::float8 /* tree 0 leaf 9 samples=2 dist=[1, 1, 0] */ END
        ELSE '0.1'::float8 /* tree 0 leaf 6 samples=30 dist=[3, 6, 21] */ END
      ELSE CASE
        WHEN "b" <= '1.0999999642372131'::float8 THEN '1.0'::float8 /* tree 0 leaf 3 samples=10 dist=[10, 0, 0] */
        ELSE CASE WHEN "a" <= 'Infinity'::float8 THEN '0.25'::float8 /* tree 0 leaf 7 samples=4 dist=[1, 2, 1] */ ELSE '0.0'::float8 /* tree 0 leaf 8 samples=1 dist=[0, 0, 1] */ END END END AS "prob_setosa",
  CASE
      WHEN "a" >= '0.3000000000000001'::float8 AND "a" <= 'Infinity'::float8 THEN CASE
        WHEN "c" <= '1e-300'::float8 THEN CASE WHEN "b" >= '-2.4999998376141007e-39'::float8 AND "b" <= 'Infinity'::float8 THEN '0.3333333333333333'::float8 ELSE '0.5'::float8 END
        ELSE '0.2'::float8 END
      ELSE CASE
        WHEN "b" <= '1.0999999642372131'::float8 THEN '0.0'::float8
        ELSE CASE WHEN "a" <= 'Infinity'::float8 THEN '0.5'::float8 ELSE '0.0'::float8 END END END AS "prob_versicolor",
  CASE
      WHEN "a" >= '0.3000000000000001'::float8 AND "a" <= 'Infinity'::float8 THEN CASE
        WHEN "c" <= '1e-300'::float8 THEN CASE WHEN "b" >= '-2.4999998376141007e-39'::float8 AND "b" <= 'Infinity'::float8 THEN '0.3333333333333333'::float8 ELSE '0.0'::float8 END
        ELSE '0.7'::float8 END
      ELSE CASE
        WHEN "b" <= '1.0999999642372131'::float8 THEN '0.0'::float8
        ELSE CASE WHEN "a" <= 'Infinity'::float8 THEN '0.25'::float8 ELSE '1.0'::float8 END END END AS "prob_virginica"
FROM "data";
