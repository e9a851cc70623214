/* rulegen SQL (postgres): classification of 'outcome', 1 tree(s), aggregation sum, link identity, dtype float64 */
/* features: 'num' (numeric), 'colour' (categorical), 'size' (categorical), 'w1' (numeric), 'w2' (numeric), 'code' (categorical) */
/* classes: 'bad', 'good' */
/* NULL is missing; NaN is missing too */
WITH
"_rg_s0" AS (
  /* inputs, NaN read as missing */
  SELECT
    "num",
    "colour",
    "size",
    "w1",
    "w2",
    "code",
    NULLIF("num", 'NaN'::float8) AS "_rg_x0",
    NULLIF("w1", 'NaN'::float8) AS "_rg_x3",
    NULLIF("w2", 'NaN'::float8) AS "_rg_x4"
  FROM "data"
),
"_rg_s1" AS (
  /* oblique tests: 0 holds, 1 does not, NULL if an input is missing */
  SELECT
    "num",
    "colour",
    "size",
    "w1",
    "w2",
    "code",
    "_rg_x0",
    "_rg_x3",
    "_rg_x4",
    CASE WHEN "w1" <= 'Infinity'::float8 AND "w2" <= 'Infinity'::float8 THEN CASE WHEN (('0.0'::float8 + CASE WHEN abs("w1") <= '5e-324'::float8 THEN '0.0'::float8 ELSE '0.5'::float8 * "w1" END) + CASE WHEN "w2" >= '1.4381545078898528e+308'::float8 THEN '-Infinity'::float8 WHEN "w2" <= '-1.4381545078898528e+308'::float8 THEN 'Infinity'::float8 ELSE '-1.25'::float8 * "w2" END) < '0.1'::float8 THEN 0 ELSE 1 END END AS "_rg_o0"
  FROM "_rg_s0" OFFSET 0
),
"_rg_s2" AS (
  /* tree 0: preparation 1 */
  SELECT
    "num",
    "colour",
    "size",
    "w1",
    "w2",
    "code",
    /* tree 0 leaf 5 */
    CASE WHEN "_rg_x0" <= '-0.9999999701976776'::float8 AND (CASE WHEN "colour" IN ('red', 'it''s') THEN 0 WHEN "colour" IS NOT NULL THEN 1 WHEN "_rg_x3" < '0.25'::float8 THEN 1 WHEN "_rg_x3" IS NOT NULL THEN 0 WHEN "size" = 'M' THEN 0 WHEN "size" IS NOT NULL THEN 1 ELSE 1 END) = 0 THEN '1.0'::float8 ELSE '0.0'::float8 END AS "_rg_t0_5",
    /* tree 0 leaf 6 */
    CASE WHEN "_rg_x0" <= '-0.9999999701976776'::float8 AND (CASE WHEN "colour" IN ('red', 'it''s') THEN 0 WHEN "colour" IS NOT NULL THEN 1 WHEN "_rg_x3" < '0.25'::float8 THEN 1 WHEN "_rg_x3" IS NOT NULL THEN 0 WHEN "size" = 'M' THEN 0 WHEN "size" IS NOT NULL THEN 1 ELSE 1 END) = 1 THEN '1.0'::float8 ELSE '0.0'::float8 END AS "_rg_t0_6",
    /* tree 0 leaf 7 */
    CASE WHEN "_rg_x0" > '-0.9999999701976776'::float8 AND "_rg_x0" <= '0.5000000298023224'::float8 AND ("size" IS NULL OR ("size" = 'S')) THEN '1.0'::float8 * CASE WHEN "size" IS NULL THEN '0.5'::float8 ELSE '1.0'::float8 END ELSE '0.0'::float8 END AS "_rg_t0_7",
    /* tree 0 leaf 9 */
    CASE WHEN "_rg_x0" > '-0.9999999701976776'::float8 AND "_rg_x0" <= '0.5000000298023224'::float8 AND ("size" IS NULL OR ("size" NOT IN ('S', 'M', 'L'))) THEN '1.0'::float8 * CASE WHEN "size" IS NULL THEN '0.2'::float8 ELSE '1.0'::float8 END ELSE '0.0'::float8 END AS "_rg_t0_9",
    /* tree 0 leaf 10 */
    CASE WHEN "_rg_x0" > '0.5000000298023224'::float8 AND "_rg_x0" <= '2.2500001192092896'::float8 AND ("_rg_o0" IS NULL OR ("_rg_o0" = 0)) THEN '1.0'::float8 ELSE '0.0'::float8 END AS "_rg_t0_10",
    /* tree 0 leaf 11 */
    CASE WHEN "_rg_x0" > '0.5000000298023224'::float8 AND "_rg_x0" <= '2.2500001192092896'::float8 AND "_rg_o0" = 1 THEN '1.0'::float8 ELSE '0.0'::float8 END AS "_rg_t0_11",
    /* tree 0 leaf 12 */
    CASE WHEN ("_rg_x0" IS NULL OR ("_rg_x0" > '2.2500001192092896'::float8)) AND ("code" IS NULL OR ("code" NOT IN (10, 30))) THEN '1.0'::float8 ELSE '0.0'::float8 END AS "_rg_t0_12",
    /* tree 0 leaf 13 */
    CASE WHEN ("_rg_x0" IS NULL OR ("_rg_x0" > '2.2500001192092896'::float8)) AND "code" IN (10, 30) THEN '1.0'::float8 ELSE '0.0'::float8 END AS "_rg_t0_13",
    /* tree 0 leaf 14 */
    CASE WHEN "_rg_x0" > '-0.9999999701976776'::float8 AND "_rg_x0" <= '0.5000000298023224'::float8 AND ("size" IS NULL OR ("size" IN ('M', 'L'))) AND ("_rg_x4" IS NULL OR ("_rg_x4" < '-0.5'::float8)) THEN '1.0'::float8 * CASE WHEN "size" IS NULL THEN '0.3'::float8 ELSE '1.0'::float8 END * CASE WHEN "_rg_x4" IS NULL THEN '0.75'::float8 ELSE '1.0'::float8 END ELSE '0.0'::float8 END AS "_rg_t0_14",
    /* tree 0 leaf 15 */
    CASE WHEN "_rg_x0" > '-0.9999999701976776'::float8 AND "_rg_x0" <= '0.5000000298023224'::float8 AND ("size" IS NULL OR ("size" IN ('M', 'L'))) AND ("_rg_x4" IS NULL OR ("_rg_x4" >= '-0.5'::float8)) THEN '1.0'::float8 * CASE WHEN "size" IS NULL THEN '0.3'::float8 ELSE '1.0'::float8 END * CASE WHEN "_rg_x4" IS NULL THEN '0.25'::float8 ELSE '1.0'::float8 END ELSE '0.0'::float8 END AS "_rg_t0_15"
  FROM "_rg_s1" OFFSET 0
),
"_rg_s3" AS (
  /* tree 0: preparation 2 */
  SELECT
    "num",
    "colour",
    "size",
    "w1",
    "w2",
    "code",
    /* tree 0: blended output 0 */
    '0.0'::float8 + "_rg_t0_5" * '0.9'::float8 + "_rg_t0_6" * '0.2'::float8 + "_rg_t0_7" * '0.6'::float8 + "_rg_t0_9" * '0.3'::float8 + "_rg_t0_10" * '0.05'::float8 + "_rg_t0_11" * '0.45'::float8 + "_rg_t0_12" * '0.7'::float8 + "_rg_t0_13" * '0.15'::float8 + "_rg_t0_14" * '1.0'::float8 + "_rg_t0_15" * '0.0'::float8 AS "_rg_b0_0",
    /* tree 0: blended output 1 */
    '0.0'::float8 + "_rg_t0_5" * '0.1'::float8 + "_rg_t0_6" * '0.8'::float8 + "_rg_t0_7" * '0.4'::float8 + "_rg_t0_9" * '0.7'::float8 + "_rg_t0_10" * '0.95'::float8 + "_rg_t0_11" * '0.55'::float8 + "_rg_t0_12" * '0.3'::float8 + "_rg_t0_13" * '0.85'::float8 + "_rg_t0_14" * '0.0'::float8 + "_rg_t0_15" * '1.0'::float8 AS "_rg_b0_1"
  FROM "_rg_s2"
),
"_rg_s4" AS (
  /* tree 0: accumulate */
  SELECT
    "num",
    "colour",
    "size",
    "w1",
    "w2",
    "code",
    '0.0'::float8
    + "_rg_b0_0" AS "_rg_a0",
    '0.0'::float8
    + "_rg_b0_1" AS "_rg_a1"
  FROM "_rg_s3" OFFSET 0
)
SELECT
  "num",
  "colour",
  "size",
  "w1",
  "w2",
  "code",
  CASE WHEN "_rg_a0" >= "_rg_a1" THEN 'bad' ELSE 'good' END AS "prediction",
  "_rg_a0" AS "prob_bad",
  "_rg_a1" AS "prob_good"
FROM "_rg_s4";
