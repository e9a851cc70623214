/* rulegen SQL (duckdb): classification of 'label', 3 tree(s), aggregation sum, link sigmoid, dtype float64 */
/* features: 'f0' (numeric), 'f1' (numeric), 'f2' (numeric), 'f3' (numeric) */
/* classes: 0, 1 */
/* NULL is missing; NaN is missing too */
WITH
"_rg_s0" AS (
  /* inputs, NaN read as missing */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    NULLIF("f0", 'NaN'::DOUBLE) AS "_rg_x0",
    NULLIF("f1", 'NaN'::DOUBLE) AS "_rg_x1",
    NULLIF("f2", 'NaN'::DOUBLE) AS "_rg_x2",
    NULLIF("f3", 'NaN'::DOUBLE) AS "_rg_x3"
  FROM "data"
),
"_rg_s1" AS (
  /* trees 0..2: accumulate */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    (-0.3e0)
    + CASE
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" < 0.45e0)) AND "_rg_x1" < (-0.48e0) THEN 0.023550561173022524e0 /* tree 0 leaf 15 */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" < 0.45e0)) AND "_rg_x1" <= 0.11e0 THEN (-0.16487873663509486e0) /* tree 0 leaf 17 */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" < 0.45e0)) AND "_rg_x1" < 0.820000022649765e0 THEN 0.02543881165176173e0 /* tree 0 leaf 18 */
      WHEN "_rg_x1" <= (-0.1e0) AND ("_rg_x3" IS NULL OR ("_rg_x3" < (-0.26e0))) THEN 0.12246469675357324e0 /* tree 0 leaf 19 */
      WHEN "_rg_x1" < 0.820000022649765e0 AND ("_rg_x3" IS NULL OR ("_rg_x3" < (-0.26e0))) THEN (-0.029752684437047323e0) /* tree 0 leaf 20 */
      WHEN "_rg_x1" < 0.820000022649765e0 THEN 0.05937480717858228e0 /* tree 0 leaf 10 */
      WHEN "_rg_x0" <= (-2.71e0) AND "_rg_x2" <= 0.29e0 AND "_rg_x3" < (-0.82e0) THEN (-0.081081458323757e0) /* tree 0 leaf 21 */
      WHEN "_rg_x0" <= (-2.71e0) AND "_rg_x2" <= 0.29e0 THEN 0.07522438271795928e0 /* tree 0 leaf 22 */
      WHEN "_rg_x2" <= 0.29e0 THEN (-0.10717874168774442e0) /* tree 0 leaf 12 */
      WHEN ("_rg_x2" IS NULL OR ("_rg_x2" <= 0.2200000062584877e0)) AND "_rg_x3" < (-1.2500000596046448e0) THEN 0.025344651620814146e0 /* tree 0 leaf 23 */
      WHEN ("_rg_x2" IS NULL OR ("_rg_x2" <= 0.2200000062584877e0)) THEN 0.08958830707775604e0 /* tree 0 leaf 24 */
      ELSE (-0.14818182737222113e0) /* tree 0 leaf 26 */
    END
    + CASE
      WHEN "_rg_x1" <= (-0.44999997317790985e0) AND ("_rg_x3" IS NULL OR ("_rg_x3" <= (-1.199999988079071e0))) THEN 0.0256485627221562e0 /* tree 1 leaf 3 */
      WHEN "_rg_x1" <= (-0.44999997317790985e0) THEN (-0.025884806478784557e0) /* tree 1 leaf 4 */
      WHEN ("_rg_x1" IS NULL OR ("_rg_x1" <= (-0.0e0))) AND ("_rg_x2" IS NULL OR ("_rg_x2" <= (-0.14e0))) AND "_rg_x3" < (-0.88e0) THEN (-0.1524686038099152e0) /* tree 1 leaf 11 */
      WHEN ("_rg_x1" IS NULL OR ("_rg_x1" <= (-0.0e0))) AND ("_rg_x2" IS NULL OR ("_rg_x2" <= (-0.14e0))) THEN (-0.2466229231351318e0) /* tree 1 leaf 12 */
      WHEN ("_rg_x1" IS NULL OR ("_rg_x1" <= (-0.0e0))) THEN 0.06168787551543195e0 /* tree 1 leaf 13 */
      WHEN ("_rg_x0" IS NULL OR ("_rg_x0" <= 0.86e0)) THEN 0.0013749583618419498e0 /* tree 1 leaf 9 */
      ELSE (-0.12506957588019882e0) /* tree 1 leaf 16 */
    END
    + CASE
      WHEN "_rg_x0" <= (-0.41e0) AND ("_rg_x1" IS NULL OR ("_rg_x1" <= (-0.84e0))) THEN (-0.10928943692952431e0) /* tree 2 leaf 3 */
      WHEN ("_rg_x1" IS NULL OR ("_rg_x1" <= (-0.84e0))) AND ("_rg_x2" IS NULL OR ("_rg_x2" <= (-2.14e0))) THEN 0.28715673378134987e0 /* tree 2 leaf 13 */
      WHEN ("_rg_x1" IS NULL OR ("_rg_x1" <= (-0.84e0))) THEN 0.08802586206615082e0 /* tree 2 leaf 14 */
      WHEN "_rg_x2" < (-0.59e0) AND "_rg_x3" < 0.28e0 THEN 0.008697924857190436e0 /* tree 2 leaf 17 */
      WHEN "_rg_x2" <= (-0.32e0) AND "_rg_x3" < 0.28e0 THEN (-0.15547311319959864e0) /* tree 2 leaf 18 */
      WHEN "_rg_x2" <= (-0.32e0) THEN 0.016863040701051428e0 /* tree 2 leaf 19 */
      ELSE (-0.09322203053719522e0) /* tree 2 leaf 12 */
    END AS "_rg_a0"
  FROM "_rg_s0"
),
"_rg_s2" AS (
  /* link: sigmoid */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    1.0e0 / (1.0e0 + exp(-"_rg_a0")) AS "_rg_y0"
  FROM "_rg_s1"
),
"_rg_s3" AS (
  /* probability of the first class */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    "_rg_y0",
    1.0e0 - "_rg_y0" AS "_rg_q0"
  FROM "_rg_s2"
)
SELECT
  "f0",
  "f1",
  "f2",
  "f3",
  CASE WHEN "_rg_q0" >= "_rg_y0" THEN 0 ELSE 1 END AS "prediction",
  "_rg_q0" AS "prob_0",
  "_rg_y0" AS "prob_1"
FROM "_rg_s3";
