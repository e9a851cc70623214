/* rulegen SQL (sqlite): classification of 'label', 3 tree(s), aggregation sum, link sigmoid, dtype float64 */
/* features: 'f0' (numeric), 'f1' (numeric), 'f2' (numeric), 'f3' (numeric) */
/* classes: 0, 1 */
/* NULL is missing */
WITH
"_rg_s0" AS (
  /* trees 0..2: accumulate */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    (-0.3)
    + CASE
      WHEN ("f0" IS NULL OR ("f0" < 0.45)) AND "f1" < (-0.48) THEN 0.023550561173022524 /* tree 0 leaf 15 */
      WHEN ("f0" IS NULL OR ("f0" < 0.45)) AND "f1" <= 0.11 THEN (-0.16487873663509486) /* tree 0 leaf 17 */
      WHEN ("f0" IS NULL OR ("f0" < 0.45)) AND "f1" < 0.820000022649765 THEN 0.02543881165176173 /* tree 0 leaf 18 */
      WHEN "f1" <= (-0.1) AND ("f3" IS NULL OR ("f3" < (-0.26))) THEN 0.12246469675357324 /* tree 0 leaf 19 */
      WHEN "f1" < 0.820000022649765 AND ("f3" IS NULL OR ("f3" < (-0.26))) THEN (-0.029752684437047323) /* tree 0 leaf 20 */
      WHEN "f1" < 0.820000022649765 THEN 0.05937480717858228 /* tree 0 leaf 10 */
      WHEN "f0" <= (-2.71) AND "f2" <= 0.29 AND "f3" < (-0.82) THEN (-0.081081458323757) /* tree 0 leaf 21 */
      WHEN "f0" <= (-2.71) AND "f2" <= 0.29 THEN 0.07522438271795928 /* tree 0 leaf 22 */
      WHEN "f2" <= 0.29 THEN (-0.10717874168774442) /* tree 0 leaf 12 */
      WHEN ("f2" IS NULL OR ("f2" <= 0.2200000062584877)) AND "f3" < (-1.2500000596046448) THEN (913137308762669.0 / 36028797018963968.0) /* tree 0 leaf 23 */
      WHEN ("f2" IS NULL OR ("f2" <= 0.2200000062584877)) THEN 0.08958830707775604 /* tree 0 leaf 24 */
      ELSE (-0.14818182737222113) /* tree 0 leaf 26 */
    END
    + CASE
      WHEN "f1" <= (-0.44999997317790985) AND ("f3" IS NULL OR ("f3" <= (-1.199999988079071))) THEN 0.0256485627221562 /* tree 1 leaf 3 */
      WHEN "f1" <= (-0.44999997317790985) THEN (-0.025884806478784557) /* tree 1 leaf 4 */
      WHEN ("f1" IS NULL OR ("f1" <= (-0.0))) AND ("f2" IS NULL OR ("f2" <= (-0.14))) AND "f3" < (-0.88) THEN (-0.1524686038099152) /* tree 1 leaf 11 */
      WHEN ("f1" IS NULL OR ("f1" <= (-0.0))) AND ("f2" IS NULL OR ("f2" <= (-0.14))) THEN (-0.2466229231351318) /* tree 1 leaf 12 */
      WHEN ("f1" IS NULL OR ("f1" <= (-0.0))) THEN 0.06168787551543195 /* tree 1 leaf 13 */
      WHEN ("f0" IS NULL OR ("f0" <= 0.86)) THEN 0.0013749583618419498 /* tree 1 leaf 9 */
      ELSE (-0.12506957588019882) /* tree 1 leaf 16 */
    END
    + CASE
      WHEN "f0" <= (-0.41) AND ("f1" IS NULL OR ("f1" <= (-0.84))) THEN (-(492195867431337.0 / 4503599627370496.0)) /* tree 2 leaf 3 */
      WHEN ("f1" IS NULL OR ("f1" <= (-0.84))) AND ("f2" IS NULL OR ("f2" <= (-2.14))) THEN 0.28715673378134987 /* tree 2 leaf 13 */
      WHEN ("f1" IS NULL OR ("f1" <= (-0.84))) THEN 0.08802586206615082 /* tree 2 leaf 14 */
      WHEN "f2" < (-0.59) AND "f3" < 0.28 THEN 0.008697924857190436 /* tree 2 leaf 17 */
      WHEN "f2" <= (-0.32) AND "f3" < 0.28 THEN (-0.15547311319959864) /* tree 2 leaf 18 */
      WHEN "f2" <= (-0.32) THEN 0.016863040701051428 /* tree 2 leaf 19 */
      ELSE (-0.09322203053719522) /* tree 2 leaf 12 */
    END AS "_rg_a0"
  FROM "data"
  LIMIT -1 OFFSET 0
),
"_rg_s1" AS (
  /* link: sigmoid */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    1.0 / (1.0 + exp(-"_rg_a0")) AS "_rg_y0"
  FROM "_rg_s0"
  LIMIT -1 OFFSET 0
),
"_rg_s2" AS (
  /* probability of the first class */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    "_rg_y0",
    1.0 - "_rg_y0" AS "_rg_q0"
  FROM "_rg_s1"
  LIMIT -1 OFFSET 0
)
SELECT
  "f0",
  "f1",
  "f2",
  "f3",
  CASE WHEN "_rg_q0" >= "_rg_y0" THEN 0 ELSE 1 END AS "prediction",
  "_rg_q0" AS "prob_0",
  "_rg_y0" AS "prob_1"
FROM "_rg_s2";
