import { runMain } from '@zc/shared/service';
import { uploadsService } from './service.js';

await runMain(uploadsService());
