/* rulegen SQL (duckdb): classification of 'label', 3 tree(s), aggregation sum, link sigmoid, dtype float64 */
/* features: 'f0' (numeric), 'f1' (numeric), 'f2' (numeric), 'f3' (numeric) */
/* classes: 0, 1 */
/* NULL is missing; NaN is missing too */
WITH
"_rg_s0" AS (
  /* trees 0..2: accumulate */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    (-0.3e0)
    + CASE
      WHEN "f1" < 0.820000022649765e0 THEN CASE
        WHEN "f0" BETWEEN 0.45e0 AND 'inf'::DOUBLE THEN CASE
          WHEN "f3" BETWEEN (-0.26e0) AND 'inf'::DOUBLE THEN 0.05937480717858228e0 /* tree 0 leaf 10 */
          ELSE CASE WHEN "f1" <= (-0.1e0) THEN 0.12246469675357324e0 /* tree 0 leaf 19 */ ELSE (-0.029752684437047323e0) /* tree 0 leaf 20 */ END END
        ELSE CASE
          WHEN "f1" < (-0.48e0) THEN CASE WHEN "f1" <= 0.6500000059604645e0 THEN 0.023550561173022524e0 /* tree 0 leaf 15 */ ELSE 0.07595195224783792e0 /* tree 0 leaf 16 */ END
          ELSE CASE WHEN "f1" BETWEEN 0.11000000000000001e0 AND 'inf'::DOUBLE THEN 0.02543881165176173e0 /* tree 0 leaf 18 */ ELSE (-0.16487873663509486e0) /* tree 0 leaf 17 */ END END END
      ELSE CASE
        WHEN "f2" <= 0.29e0 THEN CASE
          WHEN "f0" <= (-2.71e0) THEN CASE WHEN "f3" < (-0.82e0) THEN (-0.081081458323757e0) /* tree 0 leaf 21 */ ELSE 0.07522438271795928e0 /* tree 0 leaf 22 */ END
          ELSE (-0.10717874168774442e0) /* tree 0 leaf 12 */ END
        ELSE CASE
          WHEN "f2" BETWEEN 0.22000000625848773e0 AND 'inf'::DOUBLE THEN CASE WHEN "f1" <= (-1.1100000739097595e0) THEN (-0.034521571005127975e0) /* tree 0 leaf 25 */ ELSE (-0.14818182737222113e0) /* tree 0 leaf 26 */ END
          ELSE CASE WHEN "f3" < (-1.2500000596046448e0) THEN 0.025344651620814146e0 /* tree 0 leaf 23 */ ELSE 0.08958830707775604e0 /* tree 0 leaf 24 */ END END END END
    + CASE
      WHEN "f1" <= (-0.44999997317790985e0) THEN CASE WHEN "f3" BETWEEN (-1.1999999880790708e0) AND 'inf'::DOUBLE THEN (-0.025884806478784557e0) /* tree 1 leaf 4 */ ELSE 0.0256485627221562e0 /* tree 1 leaf 3 */ END
      ELSE CASE
        WHEN "f1" BETWEEN 5e-324 AND 'inf'::DOUBLE THEN CASE
          WHEN "f0" BETWEEN 0.8600000000000001e0 AND 'inf'::DOUBLE THEN CASE WHEN "f1" <= (-1.03e0) THEN (-0.10009248488718936e0) /* tree 1 leaf 15 */ ELSE (-0.12506957588019882e0) /* tree 1 leaf 16 */ END
          ELSE 0.0013749583618419498e0 /* tree 1 leaf 9 */ END
        ELSE CASE
          WHEN "f2" BETWEEN (-0.13999999999999999e0) AND 'inf'::DOUBLE THEN CASE WHEN "f1" BETWEEN 0.14000000000000004e0 AND 'inf'::DOUBLE THEN 0.2547897815483126e0 /* tree 1 leaf 14 */ ELSE 0.06168787551543195e0 /* tree 1 leaf 13 */ END
          ELSE CASE WHEN "f3" < (-0.88e0) THEN (-0.1524686038099152e0) /* tree 1 leaf 11 */ ELSE (-0.2466229231351318e0) /* tree 1 leaf 12 */ END END END END
    + CASE
      WHEN "f1" BETWEEN (-0.8399999999999999e0) AND 'inf'::DOUBLE THEN CASE
        WHEN "f2" <= (-0.32e0) THEN CASE
          WHEN "f3" < 0.28e0 THEN CASE WHEN "f2" < (-0.59e0) THEN 0.008697924857190436e0 /* tree 2 leaf 17 */ ELSE (-0.15547311319959864e0) /* tree 2 leaf 18 */ END
          ELSE CASE WHEN "f2" <= 0.17e0 THEN 0.016863040701051428e0 /* tree 2 leaf 19 */ ELSE (-0.045907155571275914e0) /* tree 2 leaf 20 */ END END
        ELSE CASE
          WHEN "f2" < (-0.9e0) THEN CASE WHEN "f2" <= 0.6400000154972076e0 THEN 0.12262706003162174e0 /* tree 2 leaf 21 */ ELSE 0.09621546636282469e0 /* tree 2 leaf 22 */ END
          ELSE (-0.09322203053719522e0) /* tree 2 leaf 12 */ END END
      ELSE CASE
        WHEN "f0" <= (-0.41e0) THEN (-0.10928943692952431e0) /* tree 2 leaf 3 */
        ELSE CASE
          WHEN "f1" BETWEEN (-0.05e0) AND 'inf'::DOUBLE THEN CASE WHEN "f2" BETWEEN 0.23e0 AND 'inf'::DOUBLE THEN (-0.07796379162397446e0) /* tree 2 leaf 16 */ ELSE (-0.11392946703429759e0) /* tree 2 leaf 15 */ END
          ELSE CASE WHEN "f2" BETWEEN (-2.1399999999999997e0) AND 'inf'::DOUBLE THEN 0.08802586206615082e0 /* tree 2 leaf 14 */ ELSE 0.28715673378134987e0 /* tree 2 leaf 13 */ END END END END AS "_rg_a0"
  FROM "data"
),
"_rg_s1" AS (
  /* link: sigmoid */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    1.0e0 / (1.0e0 + exp(-"_rg_a0")) AS "_rg_y0"
  FROM "_rg_s0"
),
"_rg_s2" AS (
  /* probability of the first class */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    "_rg_y0",
    1.0e0 - "_rg_y0" AS "_rg_q0"
  FROM "_rg_s1"
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
