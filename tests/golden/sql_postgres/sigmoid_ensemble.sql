/* rulegen SQL (postgres): classification of 'label', 3 tree(s), aggregation sum, link sigmoid, dtype float64 */
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
    '-0.3'::float8
    + CASE
      WHEN "f1" < '0.820000022649765'::float8 THEN CASE
        WHEN "f0" >= '0.45'::float8 AND "f0" <= 'Infinity'::float8 THEN CASE
          WHEN "f3" >= '-0.26'::float8 AND "f3" <= 'Infinity'::float8 THEN '0.05937480717858228'::float8 /* tree 0 leaf 10 */
          ELSE CASE WHEN "f1" <= '-0.1'::float8 THEN '0.12246469675357324'::float8 /* tree 0 leaf 19 */ ELSE '-0.029752684437047323'::float8 /* tree 0 leaf 20 */ END END
        ELSE CASE
          WHEN "f1" < '-0.48'::float8 THEN CASE WHEN "f1" <= '0.6500000059604645'::float8 THEN '0.023550561173022524'::float8 /* tree 0 leaf 15 */ ELSE '0.07595195224783792'::float8 /* tree 0 leaf 16 */ END
          ELSE CASE WHEN "f1" >= '0.11000000000000001'::float8 AND "f1" <= 'Infinity'::float8 THEN '0.02543881165176173'::float8 /* tree 0 leaf 18 */ ELSE '-0.16487873663509486'::float8 /* tree 0 leaf 17 */ END END END
      ELSE CASE
        WHEN "f2" <= '0.29'::float8 THEN CASE
          WHEN "f0" <= '-2.71'::float8 THEN CASE WHEN "f3" < '-0.82'::float8 THEN '-0.081081458323757'::float8 /* tree 0 leaf 21 */ ELSE '0.07522438271795928'::float8 /* tree 0 leaf 22 */ END
          ELSE '-0.10717874168774442'::float8 /* tree 0 leaf 12 */ END
        ELSE CASE
          WHEN "f2" >= '0.22000000625848773'::float8 AND "f2" <= 'Infinity'::float8 THEN CASE WHEN "f1" <= '-1.1100000739097595'::float8 THEN '-0.034521571005127975'::float8 /* tree 0 leaf 25 */ ELSE '-0.14818182737222113'::float8 /* tree 0 leaf 26 */ END
          ELSE CASE WHEN "f3" < '-1.2500000596046448'::float8 THEN '0.025344651620814146'::float8 /* tree 0 leaf 23 */ ELSE '0.08958830707775604'::float8 /* tree 0 leaf 24 */ END END END END
    + CASE
      WHEN "f1" <= '-0.44999997317790985'::float8 THEN CASE WHEN "f3" >= '-1.1999999880790708'::float8 AND "f3" <= 'Infinity'::float8 THEN '-0.025884806478784557'::float8 /* tree 1 leaf 4 */ ELSE '0.0256485627221562'::float8 /* tree 1 leaf 3 */ END
      ELSE CASE
        WHEN "f1" >= '5e-324'::float8 AND "f1" <= 'Infinity'::float8 THEN CASE
          WHEN "f0" >= '0.8600000000000001'::float8 AND "f0" <= 'Infinity'::float8 THEN CASE WHEN "f1" <= '-1.03'::float8 THEN '-0.10009248488718936'::float8 /* tree 1 leaf 15 */ ELSE '-0.12506957588019882'::float8 /* tree 1 leaf 16 */ END
          ELSE '0.0013749583618419498'::float8 /* tree 1 leaf 9 */ END
        ELSE CASE
          WHEN "f2" >= '-0.13999999999999999'::float8 AND "f2" <= 'Infinity'::float8 THEN CASE WHEN "f1" >= '0.14000000000000004'::float8 AND "f1" <= 'Infinity'::float8 THEN '0.2547897815483126'::float8 /* tree 1 leaf 14 */ ELSE '0.06168787551543195'::float8 /* tree 1 leaf 13 */ END
          ELSE CASE WHEN "f3" < '-0.88'::float8 THEN '-0.1524686038099152'::float8 /* tree 1 leaf 11 */ ELSE '-0.2466229231351318'::float8 /* tree 1 leaf 12 */ END END END END
    + CASE
      WHEN "f1" >= '-0.8399999999999999'::float8 AND "f1" <= 'Infinity'::float8 THEN CASE
        WHEN "f2" <= '-0.32'::float8 THEN CASE
          WHEN "f3" < '0.28'::float8 THEN CASE WHEN "f2" < '-0.59'::float8 THEN '0.008697924857190436'::float8 /* tree 2 leaf 17 */ ELSE '-0.15547311319959864'::float8 /* tree 2 leaf 18 */ END
          ELSE CASE WHEN "f2" <= '0.17'::float8 THEN '0.016863040701051428'::float8 /* tree 2 leaf 19 */ ELSE '-0.045907155571275914'::float8 /* tree 2 leaf 20 */ END END
        ELSE CASE
          WHEN "f2" < '-0.9'::float8 THEN CASE WHEN "f2" <= '0.6400000154972076'::float8 THEN '0.12262706003162174'::float8 /* tree 2 leaf 21 */ ELSE '0.09621546636282469'::float8 /* tree 2 leaf 22 */ END
          ELSE '-0.09322203053719522'::float8 /* tree 2 leaf 12 */ END END
      ELSE CASE
        WHEN "f0" <= '-0.41'::float8 THEN '-0.10928943692952431'::float8 /* tree 2 leaf 3 */
        ELSE CASE
          WHEN "f1" >= '-0.05'::float8 AND "f1" <= 'Infinity'::float8 THEN CASE WHEN "f2" >= '0.23'::float8 AND "f2" <= 'Infinity'::float8 THEN '-0.07796379162397446'::float8 /* tree 2 leaf 16 */ ELSE '-0.11392946703429759'::float8 /* tree 2 leaf 15 */ END
          ELSE CASE WHEN "f2" >= '-2.1399999999999997'::float8 AND "f2" <= 'Infinity'::float8 THEN '0.08802586206615082'::float8 /* tree 2 leaf 14 */ ELSE '0.28715673378134987'::float8 /* tree 2 leaf 13 */ END END END END AS "_rg_a0"
  FROM "data" OFFSET 0
),
"_rg_s1" AS (
  /* link: sigmoid */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    '1.0'::float8 / ('1.0'::float8 + CASE WHEN (-"_rg_a0") > '709.782712893384'::float8 THEN 'Infinity'::float8 WHEN (-"_rg_a0") < '-745.1332191019411'::float8 THEN '0.0'::float8 ELSE exp((-"_rg_a0")) END) AS "_rg_y0"
  FROM "_rg_s0" OFFSET 0
),
"_rg_s2" AS (
  /* probability of the first class */
  SELECT
    "f0",
    "f1",
    "f2",
    "f3",
    "_rg_y0",
    '1.0'::float8 - "_rg_y0" AS "_rg_q0"
  FROM "_rg_s1" OFFSET 0
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
