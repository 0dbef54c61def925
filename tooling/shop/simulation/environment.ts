// First the engine's placeholders, then the Orders table's: the entry points read their environment when they load.
import '@exactly-once/tools/simulation/world/environment';

process.env.ORDERS_TABLE_NAME ??= 'unused';
