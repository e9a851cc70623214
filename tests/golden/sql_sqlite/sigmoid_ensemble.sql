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
      WHEN "f1" < 0.820000022649765 THEN CASE
        WHEN "f0" >= 0.45 THEN CASE
          WHEN "f3" >= (-0.26) THEN 0.05937480717858228 /* tree 0 leaf 10 */
          ELSE CASE WHEN "f1" <= (-0.1) THEN 0.12246469675357324 /* tree 0 leaf 19 */ ELSE (-0.029752684437047323) /* tree 0 leaf 20 */ END END
        ELSE CASE
          WHEN "f1" < (-0.48) THEN CASE WHEN "f1" <= 0.6500000059604645 THEN 0.023550561173022524 /* tree 0 leaf 15 */ ELSE 0.07595195224783792 /* tree 0 leaf 16 */ END
          ELSE CASE WHEN "f1" >= (3963167672086037.0 / 36028797018963968.0) THEN 0.02543881165176173 /* tree 0 leaf 18 */ ELSE (-0.16487873663509486) /* tree 0 leaf 17 */ END END END
      ELSE CASE
        WHEN "f2" <= 0.29 THEN CASE
          WHEN "f0" <= (-2.71) THEN CASE WHEN "f3" < (-0.82) THEN (-0.081081458323757) /* tree 0 leaf 21 */ ELSE 0.07522438271795928 /* tree 0 leaf 22 */ END
          ELSE (-0.10717874168774442) /* tree 0 leaf 12 */ END
        ELSE CASE
          WHEN "f2" >= 0.22000000625848773 THEN CASE WHEN "f1" <= (-1.1100000739097595) THEN (-0.034521571005127975) /* tree 0 leaf 25 */ ELSE (-0.14818182737222113) /* tree 0 leaf 26 */ END
          ELSE CASE WHEN "f3" < (-1.2500000596046448) THEN (913137308762669.0 / 36028797018963968.0) /* tree 0 leaf 23 */ ELSE 0.08958830707775604 /* tree 0 leaf 24 */ END END END END
    + CASE
      WHEN "f1" <= (-0.44999997317790985) THEN CASE WHEN "f3" >= (-1.1999999880790708) THEN (-0.025884806478784557) /* tree 1 leaf 4 */ ELSE 0.0256485627221562 /* tree 1 leaf 3 */ END
      ELSE CASE
        WHEN "f1" >= (1.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 4611686018427387904.0 / 1048576.0) THEN CASE
          WHEN "f0" >= 0.8600000000000001 THEN CASE WHEN "f1" <= (-1.03) THEN (-0.10009248488718936) /* tree 1 leaf 15 */ ELSE (-0.12506957588019882) /* tree 1 leaf 16 */ END
          ELSE 0.0013749583618419498 /* tree 1 leaf 9 */ END
        ELSE CASE
          WHEN "f2" >= (-(5044031582654955.0 / 36028797018963968.0)) THEN CASE WHEN "f1" >= 0.14000000000000004 THEN 0.2547897815483126 /* tree 1 leaf 14 */ ELSE 0.06168787551543195 /* tree 1 leaf 13 */ END
          ELSE CASE WHEN "f3" < (-0.88) THEN (-0.1524686038099152) /* tree 1 leaf 11 */ ELSE (-0.2466229231351318) /* tree 1 leaf 12 */ END END END END
    + CASE
      WHEN "f1" >= (-0.8399999999999999) THEN CASE
        WHEN "f2" <= (-0.32) THEN CASE
          WHEN "f3" < 0.28 THEN CASE WHEN "f2" < (-0.59) THEN 0.008697924857190436 /* tree 2 leaf 17 */ ELSE (-0.15547311319959864) /* tree 2 leaf 18 */ END
          ELSE CASE WHEN "f2" <= 0.17 THEN 0.016863040701051428 /* tree 2 leaf 19 */ ELSE (-0.045907155571275914) /* tree 2 leaf 20 */ END END
        ELSE CASE
          WHEN "f2" < (-0.9) THEN CASE WHEN "f2" <= 0.6400000154972076 THEN 0.12262706003162174 /* tree 2 leaf 21 */ ELSE 0.09621546636282469 /* tree 2 leaf 22 */ END
          ELSE (-0.09322203053719522) /* tree 2 leaf 12 */ END END
      ELSE CASE
        WHEN "f0" <= (-0.41) THEN (-(492195867431337.0 / 4503599627370496.0)) /* tree 2 leaf 3 */
        ELSE CASE
          WHEN "f1" >= (-0.05) THEN CASE WHEN "f2" >= 0.23 THEN (-0.07796379162397446) /* tree 2 leaf 16 */ ELSE (-(8209483284514909.0 / 72057594037927936.0)) /* tree 2 leaf 15 */ END
          ELSE CASE WHEN "f2" >= (-2.1399999999999997) THEN 0.08802586206615082 /* tree 2 leaf 14 */ ELSE 0.28715673378134987 /* tree 2 leaf 13 */ END END END END AS "_rg_a0"
  FROM "data"
),
"_rg_s1" AS (
  /* link: sigmoid */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    1.0 / (1.0 + exp(-"_rg_a0")) AS "_rg_y0"
  FROM "_rg_s0" LIMIT -1 OFFSET 0
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
  FROM "_rg_s1" LIMIT -1 OFFSET 0
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
