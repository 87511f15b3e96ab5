/* SPDX-License-Identifier: MIT
 *
 * cmocka assertions on js_value_t shared by the unit tests: a value is missing, or present with an integer.
 * Include after <cmocka.h>.
 */
#ifndef JOBSCOPE_TEST_ASSERT_VALUE_H
#define JOBSCOPE_TEST_ASSERT_VALUE_H

#define assert_missing(v) assert_false((v).present)
#define assert_ival(v, x)                                                                                    \
    do {                                                                                                     \
        assert_true((v).present);                                                                            \
        assert_int_equal((v).i, (x));                                                                        \
    } while (0)

#endif
