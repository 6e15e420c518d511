package dev.idempotency.sample.orders;

import org.springframework.boot.test.context.SpringBootTest;

/**
 * The sample as it starts with nothing set: H2 in memory through R2DBC.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OrdersApplicationTests extends AbstractOrdersApplicationTests {

}
