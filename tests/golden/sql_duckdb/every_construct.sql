/* rulegen SQL (duckdb): classification of 'outcome', 1 tree(s), aggregation sum, link identity, dtype float64 */
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
    NULLIF("num", 'NaN'::DOUBLE) AS "_rg_x0",
    NULLIF("w1", 'NaN'::DOUBLE) AS "_rg_x3",
    NULLIF("w2", 'NaN'::DOUBLE) AS "_rg_x4"
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
    CASE WHEN "w1" <= 'inf'::DOUBLE AND "w2" <= 'inf'::DOUBLE THEN CASE WHEN ((0.0e0 + 0.5e0 * "w1") + (-1.25e0) * "w2") < 0.1e0 THEN 0 ELSE 1 END END AS "_rg_o0"
  FROM "_rg_s0"
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
    CASE WHEN "_rg_x0" <= (-0.9999999701976776e0) AND (CASE WHEN "colour" IN ('red', 'it''s') THEN 0 WHEN "colour" IS NOT NULL THEN 1 WHEN "_rg_x3" < 0.25e0 THEN 1 WHEN "_rg_x3" IS NOT NULL THEN 0 WHEN "size" = 'M' THEN 0 WHEN "size" IS NOT NULL THEN 1 ELSE 1 END) = 0 THEN 1.0e0 ELSE 0.0e0 END AS "_rg_t0_5",
    /* tree 0 leaf 6 */
    CASE WHEN "_rg_x0" <= (-0.9999999701976776e0) AND (CASE WHEN "colour" IN ('red', 'it''s') THEN 0 WHEN "colour" IS NOT NULL THEN 1 WHEN "_rg_x3" < 0.25e0 THEN 1 WHEN "_rg_x3" IS NOT NULL THEN 0 WHEN "size" = 'M' THEN 0 WHEN "size" IS NOT NULL THEN 1 ELSE 1 END) = 1 THEN 1.0e0 ELSE 0.0e0 END AS "_rg_t0_6",
    /* tree 0 leaf 7 */
    CASE WHEN "_rg_x0" > (-0.9999999701976776e0) AND "_rg_x0" <= 0.5000000298023224e0 AND ("size" IS NULL OR ("size" = 'S')) THEN 1.0e0 * CASE WHEN "size" IS NULL THEN 0.5e0 ELSE 1.0e0 END ELSE 0.0e0 END AS "_rg_t0_7",
    /* tree 0 leaf 9 */
    CASE WHEN "_rg_x0" > (-0.9999999701976776e0) AND "_rg_x0" <= 0.5000000298023224e0 AND ("size" IS NULL OR ("size" NOT IN ('S', 'M', 'L'))) THEN 1.0e0 * CASE WHEN "size" IS NULL THEN 0.2e0 ELSE 1.0e0 END ELSE 0.0e0 END AS "_rg_t0_9",
    /* tree 0 leaf 10 */
    CASE WHEN "_rg_x0" > 0.5000000298023224e0 AND "_rg_x0" <= 2.2500001192092896e0 AND ("_rg_o0" IS NULL OR ("_rg_o0" = 0)) THEN 1.0e0 ELSE 0.0e0 END AS "_rg_t0_10",
    /* tree 0 leaf 11 */
    CASE WHEN "_rg_x0" > 0.5000000298023224e0 AND "_rg_x0" <= 2.2500001192092896e0 AND "_rg_o0" = 1 THEN 1.0e0 ELSE 0.0e0 END AS "_rg_t0_11",
    /* tree 0 leaf 12 */
    CASE WHEN ("_rg_x0" IS NULL OR ("_rg_x0" > 2.2500001192092896e0)) AND ("code" IS NULL OR ("code" NOT IN (10, 30))) THEN 1.0e0 ELSE 0.0e0 END AS "_rg_t0_12",
    /* tree 0 leaf 13 */
    CASE WHEN ("_rg_x0" IS NULL OR ("_rg_x0" > 2.2500001192092896e0)) AND "code" IN (10, 30) THEN 1.0e0 ELSE 0.0e0 END AS "_rg_t0_13",
    /* tree 0 leaf 14 */
    CASE WHEN "_rg_x0" > (-0.9999999701976776e0) AND "_rg_x0" <= 0.5000000298023224e0 AND ("size" IS NULL OR ("size" IN ('M', 'L'))) AND ("_rg_x4" IS NULL OR ("_rg_x4" < (-0.5e0))) THEN 1.0e0 * CASE WHEN "size" IS NULL THEN 0.3e0 ELSE 1.0e0 END * CASE WHEN "_rg_x4" IS NULL THEN 0.75e0 ELSE 1.0e0 END ELSE 0.0e0 END AS "_rg_t0_14",
    /* tree 0 leaf 15 */
    CASE WHEN "_rg_x0" > (-0.9999999701976776e0) AND "_rg_x0" <= 0.5000000298023224e0 AND ("size" IS NULL OR ("size" IN ('M', 'L'))) AND ("_rg_x4" IS NULL OR ("_rg_x4" >= (-0.5e0))) THEN 1.0e0 * CASE WHEN "size" IS NULL THEN 0.3e0 ELSE 1.0e0 END * CASE WHEN "_rg_x4" IS NULL THEN 0.25e0 ELSE 1.0e0 END ELSE 0.0e0 END AS "_rg_t0_15"
  FROM "_rg_s1"
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
    0.0e0 + "_rg_t0_5" * 0.9e0 + "_rg_t0_6" * 0.2e0 + "_rg_t0_7" * 0.6e0 + "_rg_t0_9" * 0.3e0 + "_rg_t0_10" * 0.05e0 + "_rg_t0_11" * 0.45e0 + "_rg_t0_12" * 0.7e0 + "_rg_t0_13" * 0.15e0 + "_rg_t0_14" * 1.0e0 + "_rg_t0_15" * 0.0e0 AS "_rg_b0_0",
    /* tree 0: blended output 1 */
    0.0e0 + "_rg_t0_5" * 0.1e0 + "_rg_t0_6" * 0.8e0 + "_rg_t0_7" * 0.4e0 + "_rg_t0_9" * 0.7e0 + "_rg_t0_10" * 0.95e0 + "_rg_t0_11" * 0.55e0 + "_rg_t0_12" * 0.3e0 + "_rg_t0_13" * 0.85e0 + "_rg_t0_14" * 0.0e0 + "_rg_t0_15" * 1.0e0 AS "_rg_b0_1"
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
    0.0e0
    + "_rg_b0_0" AS "_rg_a0",
    0.0e0
    + "_rg_b0_1" AS "_rg_a1"
  FROM "_rg_s3"
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
