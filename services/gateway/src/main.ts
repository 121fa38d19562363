import '@zc/shared/instrumentation';
import { runMain } from '@zc/shared/service';
import { gatewayService } from './service.js';

await runMain(gatewayService());
