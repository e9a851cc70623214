/* rulegen SQL (sqlite): classification of "who's", 1 tree(s), aggregation sum, link identity, dtype float64 */
/* features: 'select' (numeric), 'x y' (numeric), 'a"b' (numeric), "O'Brien" (numeric), '* / x / *' (numeric), '\u5e74\u9f84' (numeric), '1st' (categorical) */
/* classes: 'it\'s "ok"', '* / end', '\u9009\u62e9' */
/* NULL is missing */
SELECT
  "select",
  "x y",
  "a""b",
  "O'Brien",
  "*/ x /*",
  "年龄",
  "1st",
  CASE
      WHEN "select" >= (-0.49999999999999994) THEN CASE
        WHEN "select" <= 0.0 THEN CASE
          WHEN "O'Brien" >= 0.5000000000000001 THEN 'it''s "ok"'
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 'it''s "ok"' ELSE '*/ end' END END
        ELSE CASE
          WHEN "select" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 'it''s "ok"' ELSE '*/ end' END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN '*/ end' ELSE 'it''s "ok"' END END END
      ELSE CASE
        WHEN "O'Brien" <= 0.0 THEN CASE
          WHEN "O'Brien" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 'it''s "ok"' ELSE '*/ end' END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN '*/ end' ELSE 'it''s "ok"' END END
        ELSE CASE
          WHEN "select" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN '*/ end' ELSE 'it''s "ok"' END
          ELSE 'it''s "ok"' END END END AS "prediction",
  CASE
      WHEN "select" >= (-0.49999999999999994) THEN CASE
        WHEN "select" <= 0.0 THEN CASE
          WHEN "O'Brien" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.5 /* tree 0 leaf 25 */ ELSE 1.0 /* tree 0 leaf 26 */ END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0 /* tree 0 leaf 23 */ ELSE 0.0 /* tree 0 leaf 24 */ END END
        ELSE CASE
          WHEN "select" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0 /* tree 0 leaf 29 */ ELSE 0.0 /* tree 0 leaf 30 */ END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0 /* tree 0 leaf 27 */ ELSE 0.5 /* tree 0 leaf 28 */ END END END
      ELSE CASE
        WHEN "O'Brien" <= 0.0 THEN CASE
          WHEN "O'Brien" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0 /* tree 0 leaf 17 */ ELSE 0.0 /* tree 0 leaf 18 */ END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0 /* tree 0 leaf 15 */ ELSE 0.5 /* tree 0 leaf 16 */ END END
        ELSE CASE
          WHEN "select" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0 /* tree 0 leaf 21 */ ELSE 0.5 /* tree 0 leaf 22 */ END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.5 /* tree 0 leaf 19 */ ELSE 1.0 /* tree 0 leaf 20 */ END END END END AS "prob_it's ""ok""",
  CASE
      WHEN "select" >= (-0.49999999999999994) THEN CASE
        WHEN "select" <= 0.0 THEN CASE
          WHEN "O'Brien" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.5 ELSE 0.0 END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0 ELSE 1.0 END END
        ELSE CASE
          WHEN "select" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0 ELSE 1.0 END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0 ELSE 0.5 END END END
      ELSE CASE
        WHEN "O'Brien" <= 0.0 THEN CASE
          WHEN "O'Brien" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.0 ELSE 1.0 END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0 ELSE 0.5 END END
        ELSE CASE
          WHEN "select" >= 0.5000000000000001 THEN CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 1.0 ELSE 0.5 END
          ELSE CASE WHEN "1st" IN ('it''s', '*/', '年') THEN 0.5 ELSE 0.0 END END END END AS "prob_*/ end",
  0.0 AS "prob_选择"
FROM "data";
