/* tests/test_jdom.c: the small JSON document reader (core/jdom): values,
 * escapes and surrogate pairs, lookups, and errors with byte offsets. */
#include "core/jdom.h"
#include "test.h"

static int parse(const char *s, gp_jv *v, gp_err *e)
{
    return gp_jdom_parse(s, strlen(s), v, e);
}

TEST(values_and_lookup)
{
    gp_jv v;
    gp_err e = {0};
    ASSERT_EQ_INT(parse(" {\"a\": 1.5e3, \"b\": [true, false, null, -2], \"s\": \"x\","
                        " \"o\": {\"k\": \"v\"}, \"e\": {}, \"z\": []} ",
                        &v, &e),
                  0);
    ASSERT_EQ_INT(v.type, GP_JOBJ);
    ASSERT_EQ_INT(v.n, 6);
    double d = 0;
    ASSERT(gp_jdom_num(gp_jdom_get(&v, "a"), &d));
    ASSERT_NEAR(d, 1500, 0);
    const gp_jv *b = gp_jdom_get(&v, "b");
    ASSERT(b && b->type == GP_JARR && b->n == 4);
    ASSERT(b->items[0].type == GP_JBOOL && b->items[0].boolean == 1);
    ASSERT(b->items[1].type == GP_JBOOL && b->items[1].boolean == 0);
    ASSERT_EQ_INT(b->items[2].type, GP_JNULL);
    ASSERT(!gp_jdom_num(&b->items[2], &d)); /* null is not a number */
    ASSERT(gp_jdom_num(&b->items[3], &d));
    ASSERT_NEAR(d, -2, 0);
    ASSERT_EQ_STR(gp_jdom_str(gp_jdom_get(&v, "s"), "?"), "x");
    ASSERT_EQ_STR(gp_jdom_str(gp_jdom_get(gp_jdom_get(&v, "o"), "k"), "?"), "v");
    ASSERT_EQ_STR(gp_jdom_str(gp_jdom_get(&v, "a"), "dflt"), "dflt");
    ASSERT(!gp_jdom_get(&v, "missing"));
    ASSERT(!gp_jdom_get(b, "a")); /* not an object */
    ASSERT(!gp_jdom_get(NULL, "a"));
    ASSERT_EQ_INT(gp_jdom_get(&v, "e")->n, 0);
    ASSERT_EQ_INT(gp_jdom_get(&v, "z")->type, GP_JARR);
    gp_jdom_free(&v);
    ASSERT_EQ_INT(v.type, GP_JNULL);
}

TEST(string_escapes)
{
    gp_jv v;
    gp_err e = {0};
    ASSERT_EQ_INT(parse("\"q\\\" b\\\\ s\\/ \\n\\t \\u00e9 \\u20ac \\ud83d\\ude00\"", &v, &e), 0);
    ASSERT_EQ_INT(v.type, GP_JSTR);
    ASSERT_EQ_STR(v.str, "q\" b\\ s/ \n\t \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    gp_jdom_free(&v);
}

TEST(errors_name_the_byte)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "byte 0: expected a value"},
        {"{\"a\" 1}", "byte 5: expected ':'"},
        {"[1, 2", "byte 5: expected ',' or ']'"},
        {"{\"a\":1,}", "byte 7: expected '\"'"},
        {"\"abc", "expected closing '\"'"},
        {"tru", "expected true"},
        {"[1] x", "byte 4: expected end of input"},
        {"\"\\x\"", "expected an escape"},
        {"\"\\ud83d\"", "expected a low surrogate"},
        {"-", "expected a value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gp_jv v;
        gp_err e = {0};
        ASSERT_EQ_INT(parse(bad[i].text, &v, &e), GP_EPARSE);
        ASSERT_CONTAINS(e.msg, bad[i].msg);
        ASSERT_EQ_INT(v.type, GP_JNULL);
    }
}

TEST(depth_limit)
{
    char deep[600];
    memset(deep, '[', 300);
    memset(deep + 300, ']', 300);
    deep[599] = 0; /* one ']' short does not matter: the depth check comes first */
    gp_jv v;
    gp_err e = {0};
    ASSERT_EQ_INT(parse(deep, &v, &e), GP_EPARSE);
    ASSERT_CONTAINS(e.msg, "nesting of at most 256 levels");
    char ok[400];
    memset(ok, '[', 200);
    memset(ok + 200, ']', 200);
    ASSERT_EQ_INT(gp_jdom_parse(ok, 400, &v, &e), 0);
    gp_jdom_free(&v);
}

TEST_MAIN(values_and_lookup, string_escapes, errors_name_the_byte, depth_limit)
