/* tests/test_mannwhitney.c: the Mann-Whitney U test against reference values
 * computed with scipy 1.10.1 (scipy.stats.mannwhitneyu, default options, and
 * method="asymptotic"); the script that produced them is in the comments. */
#include "analysis/mannwhitney.h"
#include "test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* mannwhitneyu([1.1,2.2,3.3,4.4], [5.5,6.6,7.7,8.8,9.9]) -> U=0.0,
 * p=0.015873015873015872 (exact); asymptotic p=0.019964453305216043 */
TEST(small_exact)
{
    double x[] = {1.1, 2.2, 3.3, 4.4}, y[] = {5.5, 6.6, 7.7, 8.8, 9.9};
    gp_mwu r;
    ASSERT_EQ_INT(gp_mwu_test(x, N(x), y, N(y), GP_MWU_AUTO, &r), 0);
    ASSERT(r.valid && r.exact);
    ASSERT_NEAR(r.u1, 0.0, 0);
    ASSERT_NEAR(r.p, 0.015873015873015872, 1e-15);
    ASSERT_NEAR(r.effect, 0.0, 0);
    ASSERT_EQ_INT(gp_mwu_test(x, N(x), y, N(y), GP_MWU_ASYMPTOTIC, &r), 0);
    ASSERT(!r.exact);
    ASSERT_NEAR(r.p, 0.019964453305216043, 1e-12);
    /* swapped samples: U1 = n1*n2 - U1, same p */
    ASSERT_EQ_INT(gp_mwu_test(y, N(y), x, N(x), GP_MWU_AUTO, &r), 0);
    ASSERT_NEAR(r.u1, 20.0, 0);
    ASSERT_NEAR(r.p, 0.015873015873015872, 1e-15);
}

/* mannwhitneyu([3,7,1,9,12,4], [8,15,11,2,14,16,13]) -> U=8.0,
 * p=0.07342657342657342 (exact); asymptotic 0.07414553111140683 */
TEST(exact_mixed)
{
    double x[] = {3, 7, 1, 9, 12, 4}, y[] = {8, 15, 11, 2, 14, 16, 13};
    gp_mwu r;
    ASSERT_EQ_INT(gp_mwu_test(x, N(x), y, N(y), GP_MWU_AUTO, &r), 0);
    ASSERT(r.exact);
    ASSERT_NEAR(r.u1, 8.0, 0);
    ASSERT_NEAR(r.p, 0.07342657342657342, 1e-14);
    ASSERT_EQ_INT(gp_mwu_test(x, N(x), y, N(y), GP_MWU_ASYMPTOTIC, &r), 0);
    ASSERT_NEAR(r.p, 0.07414553111140683, 1e-12);
}

/* ties force the asymptotic method with tie correction:
 * mannwhitneyu([1,2,2,3,3,3,4,5,6,7], [3,3,4,4,5,6,6,7,8,9,10]) -> U=24.0,
 * p=0.030030022811229785 */
TEST(ties)
{
    double x[] = {1, 2, 2, 3, 3, 3, 4, 5, 6, 7}, y[] = {3, 3, 4, 4, 5, 6, 6, 7, 8, 9, 10};
    gp_mwu r;
    ASSERT_EQ_INT(gp_mwu_test(x, N(x), y, N(y), GP_MWU_AUTO, &r), 0);
    ASSERT(!r.exact);
    ASSERT_NEAR(r.u1, 24.0, 0);
    ASSERT_NEAR(r.p, 0.030030022811229785, 1e-12);
}

/* x = [i*1.3 % 17 for i in range(30)], y = [i*1.7 % 19 + 1.5 for i in range(25)]
 * -> U=284.0, p=0.12608377247977104 (asymptotic: both sides > 8) */
TEST(asymptotic)
{
    double x[30], y[25];
    for (int i = 0; i < 30; i++) x[i] = fmod(i * 1.3, 17);
    for (int i = 0; i < 25; i++) y[i] = fmod(i * 1.7, 19) + 1.5;
    gp_mwu r;
    ASSERT_EQ_INT(gp_mwu_test(x, 30, y, 25, GP_MWU_AUTO, &r), 0);
    ASSERT(!r.exact);
    ASSERT_NEAR(r.u1, 284.0, 0);
    ASSERT_NEAR(r.p, 0.12608377247977104, 1e-12);
}

/* one side of 8, the other of 20: exact.
 * mannwhitneyu([0.5,1.5,2.5,3.5,10.5,11.5,12.5,13.5], range(20)) -> U=60.0,
 * p=0.3284856850074242; asymptotic 0.3213595674299575 */
TEST(exact_8x20)
{
    double x[] = {0.5, 1.5, 2.5, 3.5, 10.5, 11.5, 12.5, 13.5}, y[20];
    for (int i = 0; i < 20; i++) y[i] = i;
    gp_mwu r;
    ASSERT_EQ_INT(gp_mwu_test(x, N(x), y, 20, GP_MWU_AUTO, &r), 0);
    ASSERT(r.exact);
    ASSERT_NEAR(r.u1, 60.0, 0);
    ASSERT_NEAR(r.p, 0.3284856850074242, 1e-13);
    ASSERT_EQ_INT(gp_mwu_test(x, N(x), y, 20, GP_MWU_ASYMPTOTIC, &r), 0);
    ASSERT_NEAR(r.p, 0.3213595674299575, 1e-12);
}

/* all values equal: p = 1; an empty side: invalid */
TEST(degenerate)
{
    double x[] = {2, 2, 2}, y[] = {2, 2, 2, 2};
    gp_mwu r;
    ASSERT_EQ_INT(gp_mwu_test(x, 3, y, 4, GP_MWU_AUTO, &r), 0);
    ASSERT(r.valid);
    ASSERT_NEAR(r.u1, 6.0, 0);
    ASSERT_NEAR(r.p, 1.0, 0);
    ASSERT_EQ_INT(gp_mwu_test(x, 0, y, 4, GP_MWU_AUTO, &r), 0);
    ASSERT(!r.valid);
    ASSERT(isnan(r.p));
}

/* exact survival function: P(U >= 20) for sizes 4 and 5 is 1/C(9,4) = 1/126;
 * P(U >= 0) = 1; symmetric: P(U >= 11) = P(U <= 9) = 1 - P(U >= 10) */
TEST(exact_sf)
{
    ASSERT_NEAR(gp_mwu_exact_sf(4, 5, 20), 1.0 / 126, 1e-15);
    ASSERT_NEAR(gp_mwu_exact_sf(5, 4, 20), 1.0 / 126, 1e-15);
    ASSERT_NEAR(gp_mwu_exact_sf(4, 5, 0), 1.0, 1e-15);
    ASSERT_NEAR(gp_mwu_exact_sf(4, 5, 11), 1.0 - gp_mwu_exact_sf(4, 5, 10), 1e-15);
    ASSERT(isnan(gp_mwu_exact_sf(300, 300, 10)));
}

TEST_MAIN(small_exact, exact_mixed, ties, asymptotic, exact_8x20, degenerate, exact_sf)
