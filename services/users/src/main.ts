import { runMain } from '@zc/shared/service';
import { usersService } from './service.js';

await runMain(usersService);
