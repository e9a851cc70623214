/* rulegen SQL (sqlite): classification of "who's", 1 tree(s), aggregation sum, link identity, dtype float64 */
/* features: 'select' (numeric), 'x y' (numeric), 'a"b' (numeric), "O'Brien" (numeric), '* / x / *' (numeric), '\u5e74\u9f84' (numeric), '1st' (categorical) */
/* classes: 'it\'s "ok"', '* / end', '\u9009\u62e9' */
/* NULL is missing */
WITH
"_rg_s0" AS (
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
      WHEN ("select" IS NULL OR ("select" <= (-0.5))) AND "O'Brien" <= 0.0 AND "1st" IN ('it''s', '*/', '年') THEN 15 /* tree 0 leaf 15 */
      WHEN ("select" IS NULL OR ("select" <= (-0.5))) AND "O'Brien" <= 0.0 THEN 16 /* tree 0 leaf 16 */
      WHEN ("select" IS NULL OR ("select" <= (-0.5))) AND "1st" IN ('it''s', '*/', '年') THEN 19 /* tree 0 leaf 19 */
      WHEN ("select" IS NULL OR ("select" <= (-0.5))) THEN 20 /* tree 0 leaf 20 */
      WHEN "select" <= 0.0 AND ("O'Brien" IS NULL OR ("O'Brien" <= 0.5)) AND "1st" IN ('it''s', '*/', '年') THEN 23 /* tree 0 leaf 23 */
      WHEN "select" <= 0.0 AND ("O'Brien" IS NULL OR ("O'Brien" <= 0.5)) THEN 24 /* tree 0 leaf 24 */
      WHEN "select" <= 0.0 AND "1st" IN ('it''s', '*/', '年') THEN 25 /* tree 0 leaf 25 */
      WHEN "select" <= 0.0 THEN 26 /* tree 0 leaf 26 */
      WHEN ("select" IS NULL OR ("select" <= 0.5)) AND "1st" IN ('it''s', '*/', '年') THEN 27 /* tree 0 leaf 27 */
      WHEN ("select" IS NULL OR ("select" <= 0.5)) THEN 28 /* tree 0 leaf 28 */
      WHEN "1st" IN ('it''s', '*/', '年') THEN 29 /* tree 0 leaf 29 */
      ELSE 30 /* tree 0 leaf 30 */
    END AS "_rg_t0"
  FROM "data"
  LIMIT -1 OFFSET 0
),
"_rg_s1" AS (
  /* tree 0: accumulate */
  SELECT
    "select",
    "x y",
    "a""b",
    "O'Brien",
    "*/ x /*",
    "年龄",
    "1st",
    0.0
    + CASE "_rg_t0" WHEN 15 THEN 0.0 WHEN 16 THEN 0.5 WHEN 19 THEN 0.5 WHEN 20 THEN 1.0 WHEN 23 THEN 1.0 WHEN 24 THEN 0.0 WHEN 25 THEN 0.5 WHEN 26 THEN 1.0 WHEN 27 THEN 0.0 WHEN 28 THEN 0.5 WHEN 29 THEN 1.0 ELSE 0.0 END AS "_rg_a0",
    0.0
    + CASE "_rg_t0" WHEN 15 THEN 1.0 WHEN 16 THEN 0.5 WHEN 19 THEN 0.5 WHEN 20 THEN 0.0 WHEN 23 THEN 0.0 WHEN 24 THEN 1.0 WHEN 25 THEN 0.5 WHEN 26 THEN 0.0 WHEN 27 THEN 1.0 WHEN 28 THEN 0.5 WHEN 29 THEN 0.0 ELSE 1.0 END AS "_rg_a1",
    0.0
    + CASE "_rg_t0" WHEN 15 THEN 0.0 WHEN 16 THEN 0.0 WHEN 19 THEN 0.0 WHEN 20 THEN 0.0 WHEN 23 THEN 0.0 WHEN 24 THEN 0.0 WHEN 25 THEN 0.0 WHEN 26 THEN 0.0 WHEN 27 THEN 0.0 WHEN 28 THEN 0.0 WHEN 29 THEN 0.0 ELSE 0.0 END AS "_rg_a2"
  FROM "_rg_s0"
  LIMIT -1 OFFSET 0
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
FROM "_rg_s1";
