import { runMain } from '@zc/shared/service';
import { gatewayService } from './service.js';

await runMain(gatewayService());
