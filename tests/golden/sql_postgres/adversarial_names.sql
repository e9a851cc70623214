/* rulegen SQL (postgres): classification of "who's", 1 tree(s), aggregation sum, link identity, dtype float64 */
/* features: 'select' (numeric), 'x y' (numeric), 'a"b' (numeric), "O'Brien" (numeric), '* / x / *' (numeric), '\u5e74\u9f84' (numeric), '1st' (categorical) */
/* classes: 'it\'s "ok"', '* / end', '\u9009\u62e9' */
/* NULL is missing; NaN is missing too */
WITH
"_rg_s0" AS (
  /* inputs, NaN read as missing */
  SELECT
    "select",
    "x y",
    "a""b",
    "O'Brien",
    "*/ x /*",
    "年龄",
    "1st",
    NULLIF("select", 'NaN'::float8) AS "_rg_x0",
    NULLIF("x y", 'NaN'::float8) AS "_rg_x1",
    NULLIF("a""b", 'NaN'::float8) AS "_rg_x2",
    NULLIF("O'Brien", 'NaN'::float8) AS "_rg_x3",
    NULLIF("*/ x /*", 'NaN'::float8) AS "_rg_x4",
    NULLIF("年龄", 'NaN'::float8) AS "_rg_x5"
  FROM "data"
  OFFSET 0
),
"_rg_s1" AS (
  /* tree 0: preparation 1 */
  SELECT
    "select",
    "x y",
    "a""b",
    "O'Brien",
    "*/ x /*",
    "年龄",
    "1st",
    /* tree 0: leaf node id */
    CASE
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= '-0.5'::float8)) AND "_rg_x3" <= '0.0'::float8 AND "1st" IN ('it''s', '*/', '年') THEN 15 /* tree 0 leaf 15 */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= '-0.5'::float8)) AND "_rg_x3" <= '0.0'::float8 THEN 16 /* tree 0 leaf 16 */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= '-0.5'::float8)) AND "1st" IN ('it''s', '*/', '年') THEN 19 /* tree 0 leaf 19 */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= '-0.5'::float8)) THEN 20 /* tree 0 leaf 20 */
      WHEN "_rg_x0" <= '0.0'::float8 AND ("_rg_x3" IS NULL OR ("_rg_x3" <= '0.5'::float8)) AND "1st" IN ('it''s', '*/', '年') THEN 23 /* tree 0 leaf 23 */
      WHEN "_rg_x0" <= '0.0'::float8 AND ("_rg_x3" IS NULL OR ("_rg_x3" <= '0.5'::float8)) THEN 24 /* tree 0 leaf 24 */
      WHEN "_rg_x0" <= '0.0'::float8 AND "1st" IN ('it''s', '*/', '年') THEN 25 /* tree 0 leaf 25 */
      WHEN "_rg_x0" <= '0.0'::float8 THEN 26 /* tree 0 leaf 26 */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= '0.5'::float8)) AND "1st" IN ('it''s', '*/', '年') THEN 27 /* tree 0 leaf 27 */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= '0.5'::float8)) THEN 28 /* tree 0 leaf 28 */
      WHEN "1st" IN ('it''s', '*/', '年') THEN 29 /* tree 0 leaf 29 */
      ELSE 30 /* tree 0 leaf 30 */
    END AS "_rg_t0"
  FROM "_rg_s0"
  OFFSET 0
),
"_rg_s2" AS (
  /* tree 0: accumulate */
  SELECT
    "select",
    "x y",
    "a""b",
    "O'Brien",
    "*/ x /*",
    "年龄",
    "1st",
    '0.0'::float8
    + CASE "_rg_t0" WHEN 15 THEN '0.0'::float8 WHEN 16 THEN '0.5'::float8 WHEN 19 THEN '0.5'::float8 WHEN 20 THEN '1.0'::float8 WHEN 23 THEN '1.0'::float8 WHEN 24 THEN '0.0'::float8 WHEN 25 THEN '0.5'::float8 WHEN 26 THEN '1.0'::float8 WHEN 27 THEN '0.0'::float8 WHEN 28 THEN '0.5'::float8 WHEN 29 THEN '1.0'::float8 ELSE '0.0'::float8 END AS "_rg_a0",
    '0.0'::float8
    + CASE "_rg_t0" WHEN 15 THEN '1.0'::float8 WHEN 16 THEN '0.5'::float8 WHEN 19 THEN '0.5'::float8 WHEN 20 THEN '0.0'::float8 WHEN 23 THEN '0.0'::float8 WHEN 24 THEN '1.0'::float8 WHEN 25 THEN '0.5'::float8 WHEN 26 THEN '0.0'::float8 WHEN 27 THEN '1.0'::float8 WHEN 28 THEN '0.5'::float8 WHEN 29 THEN '0.0'::float8 ELSE '1.0'::float8 END AS "_rg_a1",
    '0.0'::float8
    + CASE "_rg_t0" WHEN 15 THEN '0.0'::float8 WHEN 16 THEN '0.0'::float8 WHEN 19 THEN '0.0'::float8 WHEN 20 THEN '0.0'::float8 WHEN 23 THEN '0.0'::float8 WHEN 24 THEN '0.0'::float8 WHEN 25 THEN '0.0'::float8 WHEN 26 THEN '0.0'::float8 WHEN 27 THEN '0.0'::float8 WHEN 28 THEN '0.0'::float8 WHEN 29 THEN '0.0'::float8 ELSE '0.0'::float8 END AS "_rg_a2"
  FROM "_rg_s1"
  OFFSET 0
)
SELECT
  "select",
  "x y",
  "a""b",
  "O'Brien",
  "*/ x /*",
  "年龄",
  "1st",
  CASE WHEN "_rg_a0" >= "_rg_a1" AND "_rg_a0" >= "_rg_a2" THEN 'it''s "ok"' WHEN "_rg_a1" >= "_rg_a2" THEN '*/ end' ELSE '选择' END AS "prediction",
  "_rg_a0" AS "prob_it's ""ok""",
  "_rg_a1" AS "prob_*/ end",
  "_rg_a2" AS "prob_选择"
FROM "_rg_s2";
