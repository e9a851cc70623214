/* rulegen SQL (duckdb): classification of "who's", 1 tree(s), aggregation sum, link identity, dtype float64 */
/* features: 'select' (numeric), 'x y' (numeric), 'a"b' (numeric), "O'Brien" (numeric), '* / x / *' (numeric), '\u5e74\u9f84' (numeric), '1st' (categorical) */
/* classes: 'it\'s "ok"', '* / end', '\u9009\u62e9' */
/* NULL is missing; NaN is missing too */
WITH
"_rg_s0" AS (
  /* tree 0: outputs */
  SELECT
    "select",
    "x y",
    "a""b",
    "O'Brien",
    "*/ x /*",
    "年龄",
    "1st",
    CASE
      WHEN "select" BETWEEN (-0.49999999999999994e0) AND 'inf'::DOUBLE THEN CASE
        WHEN "select" <= 0.0e0 THEN CASE
          WHEN "O'Brien" BETWEEN 0.5000000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.5e0 /* tree 0 leaf 25 */ ELSE 1.0e0 /* tree 0 leaf 26 */ END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0e0 /* tree 0 leaf 23 */ ELSE 0.0e0 /* tree 0 leaf 24 */ END END
        ELSE CASE
          WHEN "select" BETWEEN 0.5000000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0e0 /* tree 0 leaf 29 */ ELSE 0.0e0 /* tree 0 leaf 30 */ END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0e0 /* tree 0 leaf 27 */ ELSE 0.5e0 /* tree 0 leaf 28 */ END END END
      ELSE CASE
        WHEN "O'Brien" <= 0.0e0 THEN CASE
          WHEN "O'Brien" BETWEEN 0.5000000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0e0 /* tree 0 leaf 17 */ ELSE 0.0e0 /* tree 0 leaf 18 */ END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0e0 /* tree 0 leaf 15 */ ELSE 0.5e0 /* tree 0 leaf 16 */ END END
        ELSE CASE
          WHEN "select" BETWEEN 0.5000000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0e0 /* tree 0 leaf 21 */ ELSE 0.5e0 /* tree 0 leaf 22 */ END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.5e0 /* tree 0 leaf 19 */ ELSE 1.0e0 /* tree 0 leaf 20 */ END END END END AS "_rg_v0",
    CASE
      WHEN "select" BETWEEN (-0.49999999999999994e0) AND 'inf'::DOUBLE THEN CASE
        WHEN "select" <= 0.0e0 THEN CASE
          WHEN "O'Brien" BETWEEN 0.5000000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.5e0 ELSE 0.0e0 END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0e0 ELSE 1.0e0 END END
        ELSE CASE
          WHEN "select" BETWEEN 0.5000000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0e0 ELSE 1.0e0 END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0e0 ELSE 0.5e0 END END END
      ELSE CASE
        WHEN "O'Brien" <= 0.0e0 THEN CASE
          WHEN "O'Brien" BETWEEN 0.5000000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0e0 ELSE 1.0e0 END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0e0 ELSE 0.5e0 END END
        ELSE CASE
          WHEN "select" BETWEEN 0.5000000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0e0 ELSE 0.5e0 END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.5e0 ELSE 0.0e0 END END END END AS "_rg_v1",
    0.0e0 AS "_rg_v2"
  FROM "data"
)
SELECT
  "select",
  "x y",
  "a""b",
  "O'Brien",
  "*/ x /*",
  "年龄",
  "1st",
  CASE WHEN "_rg_v0" >= "_rg_v1" AND "_rg_v0" >= "_rg_v2" THEN 'it''s "ok"' WHEN "_rg_v1" >= "_rg_v2" THEN '*/ end' ELSE '选择' END AS "prediction",
  "_rg_v0" AS "prob_it's ""ok""",
  "_rg_v1" AS "prob_*/ end",
  "_rg_v2" AS "prob_选择"
FROM "_rg_s0";
